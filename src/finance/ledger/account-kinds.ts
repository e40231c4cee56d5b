/**
 * Account types whose transactions move the balance, as upstream's calculators: cash accounts,
 * investments (cash plus holdings) and loans (principal). A property's, vehicle's or other asset's
 * or liability's value moves only with its valuations.
 */
export const MOVING_ACCOUNT_TYPES = ["depository", "credit_card", "investment", "crypto", "loan"] as const;

/** Account types valued as cash plus holdings (upstream's `balance_type == :investment`). */
export const INVESTED_ACCOUNT_TYPES = ["investment", "crypto"] as const;

/** A list of types as SQL literals, for `IN (…)`. */
export const sqlList = (types: readonly string[]) => types.map((type) => `'${type}'`).join(", ");

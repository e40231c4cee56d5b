/**
 * Who may call each GraphQL root field, in one table: the auth checker enforces it (every root field
 * carries a bare `@Authorized()` that hands the decision here), REST routes inherit it through the
 * operations they run, and the authorization matrix in the suite (test/integration/authorization.matrix
 * .test.ts) calls every field and route as every kind of caller and compares the outcome with this table.
 * A root field without a rule is refused at run time and fails the matrix.
 *
 * - read: any signed-in caller, any scope.
 * - write: any signed-in caller with a read_write credential.
 * - audit: administrators and auditors, any scope (audit exports and reports are documented as reads).
 * - auditWrite: administrators and auditors with a read_write credential.
 * - admin: administrators, any scope.
 * - adminWrite: administrators with a read_write credential.
 */
export type AccessRule = "read" | "write" | "audit" | "auditWrite" | "admin" | "adminWrite";

export type RootType = "Query" | "Mutation" | "Subscription";

export const ACCESS_RULES: Record<RootType, Record<string, AccessRule>> = {
  Query: {
    // AccountResolver
    account: "read",
    accountPage: "read",
    accounts: "read",
    balanceSheet: "read",
    // BalanceResolver
    balance: "read",
    balances: "read",
    netWorthSeries: "read",
    // AlertResolver
    alertChannels: "admin",
    alertFirings: "admin",
    alertLimits: "admin",
    alertPresets: "admin",
    alertRules: "admin",
    // AuditExportResolver
    auditExport: "audit",
    auditExports: "audit",
    // AuditResolver
    auditChainHeadSeq: "audit",
    auditChainVerification: "audit",
    auditEventFacets: "audit",
    auditEventHistogram: "audit",
    auditEventTypes: "audit",
    auditEvents: "audit",
    auditEventsAfterSeq: "audit",
    auditSavedSearch: "audit",
    auditSavedSearches: "audit",
    // BankConnectionResolver
    bankConnection: "read",
    bankConnections: "read",
    bankSyncRun: "read",
    bankSyncRuns: "read",
    latestBankSyncRun: "read",
    // ExchangeRateResolver
    exchangeRates: "read",
    // ValuationResolver
    valuation: "read",
    valuations: "read",
    // BudgetResolver
    budget: "read",
    budgetCategories: "read",
    budgetCategory: "read",
    budgets: "read",
    // CategoryResolver
    categories: "read",
    category: "read",
    categoryPage: "read",
    // ChatResolver
    chat: "read",
    chats: "read",
    // HoldingResolver
    holding: "read",
    holdings: "read",
    // SecurityResolver
    securities: "read",
    security: "read",
    securityPrice: "read",
    securityPrices: "read",
    // TradeResolver
    trade: "read",
    trades: "read",
    // HouseholdResolver
    familySettings: "read",
    rejectedTransfer: "read",
    rejectedTransfers: "read",
    // FamilyResetResolver
    familyResetStatus: "admin",
    // FamilyExportResolver: family administrators, as upstream's controller (ensure_admin)
    familyExport: "admin",
    familyExports: "admin",
    // ImportResolver
    import: "read",
    importPreflight: "read",
    importRows: "read",
    imports: "read",
    // IdentityResolver
    apiKeys: "read",
    me: "read",
    // TwoFactorResolver
    twoFactorStatus: "read",
    // MerchantResolver
    merchant: "read",
    merchants: "read",
    // RetentionResolver
    auditArchiveSearch: "audit",
    auditArchives: "audit",
    auditCheckpoints: "audit",
    auditRetention: "audit",
    // RecurringTransactionResolver
    recurringTransaction: "read",
    recurringTransactions: "read",
    upcomingBills: "read",
    // RuleResolver
    rule: "read",
    ruleRun: "read",
    ruleRuns: "read",
    rules: "read",
    // SsoResolver
    connectedAccounts: "read",
    ssoProvider: "admin",
    ssoProviders: "admin",
    // StreamResolver
    streamDeliveries: "audit",
    streamDestination: "audit",
    streamDestinationKinds: "audit",
    streamDestinations: "audit",
    // TagResolver
    tag: "read",
    tags: "read",
    // TransactionResolver
    transaction: "read",
    transactions: "read",
    // TransferResolver
    transfer: "read",
    transfers: "read",
    // UsageResolver
    usage: "read",
    // UserAdminResolver
    user: "admin",
    users: "admin",
    // UserLookupResolver
    auditUserLookup: "audit",
  },
  Mutation: {
    // AccountResolver
    createAccount: "write",
    deleteAccount: "write",
    updateAccount: "write",
    // AlertResolver
    createAlertChannel: "adminWrite",
    createAlertRule: "adminWrite",
    deleteAlertChannel: "adminWrite",
    deleteAlertRule: "adminWrite",
    enableAlertPreset: "adminWrite",
    testAlertChannel: "adminWrite",
    updateAlertChannel: "adminWrite",
    updateAlertRule: "adminWrite",
    // AuditExportResolver
    createAuditExport: "audit",
    createAuditExportDownloadUrl: "audit",
    createAuditReport: "audit",
    // AuditResolver
    createAuditSavedSearch: "auditWrite",
    deleteAuditSavedSearch: "auditWrite",
    renameAuditSavedSearch: "auditWrite",
    // BankConnectionResolver
    connectLunchflow: "write",
    connectSimplefin: "write",
    deleteBankConnection: "write",
    linkBankAccount: "write",
    replaceBankCredentials: "write",
    syncAllBankConnections: "write",
    syncBankConnection: "write",
    updateBankConnection: "write",
    // BudgetResolver
    setBudget: "write",
    setBudgetCategory: "write",
    // CategoryResolver
    createCategory: "write",
    deleteCategory: "write",
    updateCategory: "write",
    // ChatResolver
    createChat: "write",
    createChatMessage: "write",
    deleteChat: "write",
    retryChatReply: "write",
    updateChat: "write",
    // FamilyResetResolver
    resetFamilyData: "adminWrite",
    // FamilyExportResolver
    createFamilyExport: "adminWrite",
    // A download is a read (upstream: read scope), as the audit exports' download URL is.
    createFamilyExportDownloadUrl: "admin",
    // ImportResolver
    createImport: "write",
    publishImport: "write",
    // IdentityResolver
    createApiKey: "write",
    deleteMyAccount: "write",
    enableAi: "write",
    revokeApiKey: "write",
    // MerchantResolver
    createMerchant: "write",
    deleteMerchant: "write",
    updateMerchant: "write",
    // RetentionResolver
    releaseAuditArchive: "adminWrite",
    restoreAuditArchive: "adminWrite",
    runAuditRetention: "adminWrite",
    updateAuditRetention: "adminWrite",
    // RecurringTransactionResolver
    createRecurringTransaction: "write",
    deleteRecurringTransaction: "write",
    detectRecurringTransactions: "write",
    updateRecurringTransaction: "write",
    // RuleResolver
    applyRule: "write",
    createRule: "write",
    deleteRule: "write",
    updateRule: "write",
    // SsoResolver
    createSsoProvider: "adminWrite",
    deleteSsoProvider: "adminWrite",
    disableSsoProvider: "adminWrite",
    disconnectConnectedAccount: "write",
    enableSsoProvider: "adminWrite",
    testSsoProvider: "adminWrite",
    updateSsoProvider: "adminWrite",
    // StreamResolver
    createStreamDestination: "adminWrite",
    deleteStreamDestination: "adminWrite",
    pauseStreamDestination: "adminWrite",
    replayStreamDestination: "adminWrite",
    resumeStreamDestination: "adminWrite",
    rotateStreamWebhookSecret: "adminWrite",
    testStreamDestination: "adminWrite",
    updateStreamDestination: "adminWrite",
    // TagResolver
    createTag: "write",
    deleteTag: "write",
    updateTag: "write",
    // TransactionResolver
    createTransaction: "write",
    // ExchangeRateResolver
    deleteExchangeRate: "write",
    setExchangeRate: "write",
    // SecurityPriceResolver: prices are shared by every family (a price moves every family's valuations)
    recordSecurityPrices: "adminWrite",
    // TradeResolver
    createInvestmentActivity: "write",
    createTrade: "write",
    deleteTrade: "write",
    updateTrade: "write",
    // ValuationResolver
    createValuation: "write",
    deleteValuation: "write",
    updateValuation: "write",
    createTransfer: "write",
    deleteTransaction: "write",
    updateTransaction: "write",
    // UserAdminResolver
    deleteUser: "adminWrite",
    reactivateUser: "adminWrite",
    setUserRole: "adminWrite",
    suspendUser: "adminWrite",
    updateUser: "adminWrite",
    unlockUser: "adminWrite",
    // TwoFactorResolver
    beginTwoFactorEnrolment: "write",
    confirmTwoFactorEnrolment: "write",
    resetTwoFactor: "adminWrite",
  },
  Subscription: {
    // AlertResolver
    alertFired: "admin",
    // AuditResolver
    auditEventRecorded: "audit",
    // BankConnectionResolver
    bankSyncEvents: "read",
    // ChatResolver
    chatEvents: "read",
  },
};

/** The rule of a root field; undefined when none is declared. */
export function accessRuleOf(type: string, field: string): AccessRule | undefined {
  return Object.hasOwn(ACCESS_RULES, type) ? ACCESS_RULES[type as RootType][field] : undefined;
}

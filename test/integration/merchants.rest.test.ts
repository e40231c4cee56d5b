import { randomUUID } from "node:crypto";
import { QueryTypes } from "sequelize";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * /api/v1/merchants as docs/rest-compat.md describes it: a paginated list ordered by name, and
 * get/create/update/delete of one merchant, scoped to the caller's family.
 */

const MERCHANT_KEYS = ["created_at", "id", "logo_url", "name", "updated_at"];
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

/** A user in a new family, with a REST client for /api/v1 using their read_write key. */
async function newFamily() {
  const user = await createUser(app.runtime.services);
  return { user, api: apiKeyClient(`${app.url}/api/v1`, user.key) };
}

function createMerchants(user: TestUser, names: string[]) {
  return Promise.all(names.map((name) => app.runtime.services.merchants.create(user.actor, { name })));
}

const namesOf = (body: { merchants: Array<{ name: string }> }) => body.merchants.map((merchant) => merchant.name);

describe("GET /api/v1/merchants", () => {
  describe("shape and order", () => {
    test("lists the family's merchants ordered by name, ignoring case, with pagination", async () => {
      const { user, api } = await newFamily();
      await createMerchants(user, ["banana Stand", "Cherry Co", "apricot Farm", "Apple Store"]);

      const response = await api.get("/merchants");

      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(["merchants", "pagination"]);
      expect(namesOf(response.body)).toEqual(["Apple Store", "apricot Farm", "banana Stand", "Cherry Co"]);
      expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total_count: 4, total_pages: 1 });
      for (const merchant of response.body.merchants) {
        expect(Object.keys(merchant).sort()).toEqual(MERCHANT_KEYS);
        expect(merchant).toMatchObject({
          id: expect.any(String),
          logo_url: null,
          created_at: expect.stringMatching(ISO_INSTANT),
          updated_at: expect.stringMatching(ISO_INSTANT),
        });
      }
    });

    test("an empty family gets an empty list and zero totals", async () => {
      const { api } = await newFamily();
      const response = await api.get("/merchants");
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ merchants: [], pagination: { page: 1, per_page: 25, total_count: 0, total_pages: 1 } });
    });
  });

  describe("pagination", () => {
    // 105 merchants, "Merchant 001" … "Merchant 105": enough to see the default, the cap and the last page.
    const TOTAL = 105;
    let api: ReturnType<typeof apiKeyClient>;
    beforeAll(async () => {
      const family = await newFamily();
      api = family.api;
      await createMerchants(
        family.user,
        Array.from({ length: TOTAL }, (_, i) => `Merchant ${String(i + 1).padStart(3, "0")}`),
      );
    });

    test("defaults to page 1 of 25", async () => {
      const { body } = await api.get("/merchants");
      expect(body.merchants).toHaveLength(25);
      expect(body.merchants[0].name).toBe("Merchant 001");
      expect(body.pagination).toEqual({ page: 1, per_page: 25, total_count: TOTAL, total_pages: 5 });
    });

    test("page and per_page select a slice", async () => {
      const { body } = await api.get("/merchants?page=3&per_page=10");
      expect(namesOf(body)).toEqual(Array.from({ length: 10 }, (_, i) => `Merchant ${String(21 + i).padStart(3, "0")}`));
      expect(body.pagination).toEqual({ page: 3, per_page: 10, total_count: TOTAL, total_pages: 11 });
    });

    test("the last page holds the remainder", async () => {
      const { body } = await api.get("/merchants?page=5");
      expect(namesOf(body)).toEqual(["Merchant 101", "Merchant 102", "Merchant 103", "Merchant 104", "Merchant 105"]);
    });

    test.each(["500", "101", "0", "-3"])("per_page %s is upstream's default of 25", async (perPage) => {
      const { body } = await api.get(`/merchants?per_page=${perPage}`);
      expect(body.merchants).toHaveLength(25);
      expect(body.pagination).toEqual({ page: 1, per_page: 25, total_count: TOTAL, total_pages: 5 });
    });

    test.each(["0", "-2"])("page %s becomes page 1", async (page) => {
      const { body } = await api.get(`/merchants?page=${page}&per_page=10`);
      expect(body.pagination.page).toBe(1);
      expect(body.merchants[0].name).toBe("Merchant 001");
    });

    test("non-numbers fall back to the defaults", async () => {
      const response = await api.get("/merchants?page=abc&per_page=lots");
      expect(response.status).toBe(200);
      expect(response.body.merchants).toHaveLength(25);
      expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total_count: TOTAL, total_pages: 5 });
    });

    test("a page past the end is empty but still carries the totals", async () => {
      const response = await api.get("/merchants?page=9");
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ merchants: [], pagination: { page: 9, per_page: 25, total_count: TOTAL, total_pages: 5 } });
    });
  });
});

describe("one merchant: /api/v1/merchants/{id}", () => {
  let user: TestUser;
  let api: ReturnType<typeof apiKeyClient>;
  beforeAll(async () => {
    ({ user, api } = await newFamily());
  });

  describe("POST creates", () => {
    test("answers 201 with the merchant, which can then be read back", async () => {
      const created = await api.post("/merchants", {
        merchant: { name: "Whole Foods", color: "#1a2b3c", logo_url: "https://example.test/wf.png" },
      });

      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(MERCHANT_KEYS);
      expect(created.body).toMatchObject({ name: "Whole Foods", logo_url: "https://example.test/wf.png" });

      const read = await api.get(`/merchants/${created.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
      // The REST shape leaves color out; it is stored all the same.
      expect((await app.runtime.services.merchants.get(user.actor, created.body.id)).color).toBe("#1a2b3c");
    });

    test("name only is enough", async () => {
      const created = await api.post("/merchants", { merchant: { name: "Corner Shop" } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: "Corner Shop", logo_url: null });
    });

    test("a name already used in the family, in any case, is refused", async () => {
      await api.post("/merchants", { merchant: { name: "Target" } });
      const duplicate = await api.post("/merchants", { merchant: { name: "TARGET" } });
      expect(duplicate.status).toBe(422);
      expect(duplicate.body).toEqual({
        error: "validation_failed",
        message: "Validation failed: Name has already been taken",
        errors: ["Name has already been taken"],
      });
    });

    test("the same name is fine in another family", async () => {
      await api.post("/merchants", { merchant: { name: "Costco" } });
      const other = await newFamily();
      const created = await other.api.post("/merchants", { merchant: { name: "Costco" } });
      expect(created.status).toBe(201);
    });

    test.each([
      ["a blank name", { name: "   " }, "Name can't be blank"],
      ["a missing name", { color: "#123456" }, "Name can't be blank"],
      ["a color that is not #RRGGBB", { name: "Colorful", color: "red" }, "Color must be a hex color like #1a2b3c"],
      [
        "a logo_url that is not http(s)",
        { name: "Logo", logo_url: "ftp://example.test/logo.png" },
        "Logo url must be an http or https URL",
      ],
      ["a logo_url that is not a URL", { name: "Logo", logo_url: "not a url" }, "Logo url must be an http or https URL"],
    ])("%s answers 422", async (_case, merchant, message) => {
      const response = await api.post("/merchants", { merchant });
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ error: "validation_failed", errors: [message] });
    });

    test("every problem is reported at once", async () => {
      const response = await api.post("/merchants", { merchant: { name: "", color: "blue", logo_url: "javascript:alert(1)" } });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual([
        "Name can't be blank",
        "Color must be a hex color like #1a2b3c",
        "Logo url must be an http or https URL",
      ]);
    });

    test("a body without the merchant key is a bad request", async () => {
      const response = await api.post("/merchants", { name: "Loose" });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: "bad_request", message: "param is missing or the value is empty: merchant" });
    });
  });

  describe("PATCH updates", () => {
    test("changes only the fields sent", async () => {
      const created = await api.post("/merchants", { merchant: { name: "Old Name", logo_url: "https://example.test/a.png" } });
      const updated = await api.patch(`/merchants/${created.body.id}`, { merchant: { name: "New Name" } });

      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id: created.body.id, name: "New Name", logo_url: "https://example.test/a.png" });
      expect((await api.get(`/merchants/${created.body.id}`)).body.name).toBe("New Name");
    });

    test("null clears the logo", async () => {
      const created = await api.post("/merchants", { merchant: { name: "Logo Clearing", logo_url: "https://example.test/b.png" } });
      const updated = await api.patch(`/merchants/${created.body.id}`, { merchant: { logo_url: null } });
      expect(updated.body.logo_url).toBeNull();
    });

    test("renaming onto another merchant's name is refused; keeping its own name is not", async () => {
      await api.post("/merchants", { merchant: { name: "Taken" } });
      const created = await api.post("/merchants", { merchant: { name: "Renamer" } });

      const clash = await api.patch(`/merchants/${created.body.id}`, { merchant: { name: "taken" } });
      expect(clash.status).toBe(422);
      expect(clash.body.errors).toEqual(["Name has already been taken"]);

      const sameName = await api.patch(`/merchants/${created.body.id}`, { merchant: { name: "RENAMER" } });
      expect(sameName.status).toBe(200);
      expect(sameName.body.name).toBe("RENAMER");
    });

    test("invalid values answer 422 and change nothing", async () => {
      const created = await api.post("/merchants", { merchant: { name: "Stays" } });
      const response = await api.patch(`/merchants/${created.body.id}`, { merchant: { name: "", color: "#12345" } });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual(["Name can't be blank", "Color must be a hex color like #1a2b3c"]);
      expect((await api.get(`/merchants/${created.body.id}`)).body.name).toBe("Stays");
    });
  });

  describe("DELETE removes", () => {
    test("answers 200 with a message; the merchant is gone and its transactions stay, without a merchant", async () => {
      const merchant = await api.post("/merchants", { merchant: { name: "Closing Down" } });
      const account = await createAccount(app.runtime.services, user);
      const transaction = await api.post("/transactions", {
        transaction: { account_id: account.id, date: "2024-03-01", amount: 12, name: "Last purchase", merchant_id: merchant.body.id },
      });
      expect(transaction.body.merchant).toEqual({ id: merchant.body.id, name: "Closing Down" });

      const deleted = await api.delete(`/merchants/${merchant.body.id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ message: "Merchant deleted successfully" });

      expect((await api.get(`/merchants/${merchant.body.id}`)).status).toBe(404);
      const kept = await api.get(`/transactions/${transaction.body.id}`);
      expect(kept.status).toBe(200);
      expect(kept.body).toMatchObject({ id: transaction.body.id, name: "Last purchase", merchant: null });
    });

    test("deleting twice answers 404 the second time", async () => {
      const merchant = await api.post("/merchants", { merchant: { name: "Twice" } });
      expect((await api.delete(`/merchants/${merchant.body.id}`)).status).toBe(200);
      expect((await api.delete(`/merchants/${merchant.body.id}`)).status).toBe(404);
    });
  });

  describe("ids that name no merchant of the family answer 404", () => {
    let otherFamilysMerchantId: string;
    beforeAll(async () => {
      const other = await newFamily();
      otherFamilysMerchantId = (await other.api.post("/merchants", { merchant: { name: "Theirs" } })).body.id;
    });

    const cases: Array<[string, () => string]> = [
      ["an unknown id", () => randomUUID()],
      ["a malformed id", () => "not-a-uuid"],
      ["another family's id", () => otherFamilysMerchantId],
    ];

    test.each(cases)("%s", async (_case, id) => {
      const notFound = { error: "not_found", message: "Merchant not found" };
      const responses = [
        await api.get(`/merchants/${id()}`),
        await api.patch(`/merchants/${id()}`, { merchant: { name: "Hijack" } }),
        await api.delete(`/merchants/${id()}`),
      ];
      for (const response of responses) {
        expect(response.status).toBe(404);
        expect(response.body).toEqual(notFound);
      }
    });

    test("another family's merchant is left untouched", async () => {
      await api.patch(`/merchants/${otherFamilysMerchantId}`, { merchant: { name: "Hijack" } });
      await api.delete(`/merchants/${otherFamilysMerchantId}`);
      const owner = await app.runtime.sequelize.query<{ name: string }>("SELECT name FROM merchants WHERE id = $1", {
        bind: [otherFamilysMerchantId],
        type: QueryTypes.SELECT,
      });
      expect(owner).toEqual([{ name: "Theirs" }]);
    });
  });
});

describe("routing under /api/v1", () => {
  let api: ReturnType<typeof apiKeyClient>;
  beforeAll(async () => {
    ({ api } = await newFamily());
  });

  test("a method the path does not support answers 405 with an Allow header", async () => {
    const collection = await api.put("/merchants", { merchant: { name: "Put" } });
    expect(collection.status).toBe(405);
    expect(collection.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(collection.body).toEqual({ error: "method_not_allowed", message: "PUT is not allowed here" });

    const member = await api.post(`/merchants/${randomUUID()}`, { merchant: { name: "Post" } });
    expect(member.status).toBe(405);
    expect(member.headers.get("allow")).toBe("GET, HEAD, PATCH, PUT, DELETE");
  });

  test("an unknown route answers 404 in the JSON error shape", async () => {
    const response = await api.get("/merchant-categories");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.body).toEqual({ error: "not_found", message: "No route matches GET /api/v1/merchant-categories" });
  });

  test("a nested path beyond a merchant is unknown too", async () => {
    const response = await api.get(`/merchants/${randomUUID()}/logo`);
    expect(response.status).toBe(404);
    expect(response.body.error).toBe("not_found");
  });
});

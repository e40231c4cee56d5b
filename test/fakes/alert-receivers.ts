import { FakeHttpServer, sendJson } from "./fake-http";

/**
 * Loopback receivers for the alert channels that speak HTTP, each as strict as the real service on
 * what it checks: a Slack-compatible incoming webhook, and an SMS gateway in the shape of Twilio's
 * Messages API. Both can fail on purpose (FakeHttpServer.inject).
 */

/** Slack incoming webhooks: POST JSON with a non-empty `text`; answers `ok`, or 400 `invalid_payload`. */
export function chatWebhook(): FakeHttpServer {
  return new FakeHttpServer((request, res) => {
    let payload: unknown;
    try {
      payload = JSON.parse(request.body);
    } catch {
      payload = null;
    }
    const text = (payload as { text?: unknown } | null)?.text;
    if (
      request.method !== "POST" ||
      !/^application\/json/.test(request.headers["content-type"] ?? "") ||
      typeof text !== "string" ||
      !text
    ) {
      res.writeHead(400, { "content-type": "text/plain" });
      return void res.end("invalid_payload");
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
}

export const SMS_ACCOUNT_SID = "AC0123456789abcdef0123456789abcdef";
export const SMS_AUTH_TOKEN = "sms-test-auth-token";

/**
 * Twilio's Messages API: POST /2010-04-01/Accounts/{AccountSid}/Messages.json, HTTP Basic with the
 * account SID and auth token, form fields To, From, Body; 201 with the message resource, 401 error
 * 20003 for bad credentials, 400 error 21604 / 21603 / 21602 for a missing To / From / Body.
 */
export function smsGateway(accountSid = SMS_ACCOUNT_SID, authToken = SMS_AUTH_TOKEN): FakeHttpServer {
  let sequence = 0;
  return new FakeHttpServer((request, res) => {
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(request.path);
    if (!match || request.method !== "POST")
      return sendJson(res, 404, { code: 20404, message: "The requested resource was not found", status: 404 });
    const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`;
    if (match[1] !== accountSid || request.headers.authorization !== expected)
      return sendJson(res, 401, { code: 20003, message: "Authentication Error - invalid username", status: 401 });
    if (!/^application\/x-www-form-urlencoded/.test(request.headers["content-type"] ?? ""))
      return sendJson(res, 400, { code: 20001, message: "Invalid content type", status: 400 });
    const form = new URLSearchParams(request.body);
    if (!form.get("To")) return sendJson(res, 400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
    if (!form.get("From")) return sendJson(res, 400, { code: 21603, message: "A 'From' phone number is required.", status: 400 });
    if (!form.get("Body")) return sendJson(res, 400, { code: 21602, message: "Message body is required.", status: 400 });
    sequence += 1;
    sendJson(res, 201, {
      sid: `SM${String(sequence).padStart(32, "0")}`,
      account_sid: accountSid,
      to: form.get("To"),
      from: form.get("From"),
      body: form.get("Body"),
      status: "queued",
      num_segments: "1",
      api_version: "2010-04-01",
    });
  });
}

import type { OutboundGuard } from "../../../platform/outbound/outbound.guard";
import { datadog, elastic, HttpBatchSender, sentinel, splunk } from "./http-batch.sender";
import type { Sender, SenderTarget } from "./sender";
import { SyslogSender } from "./syslog.sender";
import { WebhookSender } from "./webhook.sender";

/** The sender of a destination's kind. */
export function createSender(target: SenderTarget, guard: OutboundGuard): Sender {
  switch (target.kind) {
    case "webhook":
      return new WebhookSender(target, guard);
    case "splunk":
      return new HttpBatchSender(splunk(target), guard);
    case "elastic":
      return new HttpBatchSender(elastic(target), guard);
    case "datadog":
      return new HttpBatchSender(datadog(target), guard);
    case "sentinel":
      return new HttpBatchSender(sentinel(target, guard), guard);
    case "qradar":
    case "arcsight":
      return new SyslogSender(target, guard);
  }
}

declare module "nsyslog-parser" {
  /** Parses one syslog line (RFC 3164 or 5424), recognising CEF and LEEF messages. */
  function parse(line: string): unknown;
  export default parse;
}

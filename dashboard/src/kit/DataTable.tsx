import type { HTMLAttributes, ReactNode } from "react";

/** One column: its header and what each row shows in it. `when: false` leaves it out (e.g. actions for readers). */
export type Column<Row> = {
  /** Also each cell's caption when a phone shows the rows as cards. */
  header: string;
  cell(row: Row): ReactNode;
  className?: string;
  when?: boolean;
};

type Props<Row> = {
  rows: readonly Row[];
  columns: Array<Column<Row>>;
  rowKey(row: Row): string;
  /** The table's accessible name (also names its scrolling region). */
  label: string;
  /** The id of a heading that names the table instead of `label` (the label still names the region). */
  labelledBy?: string;
  /** Shown instead of the table while there are no rows, once `loaded`. */
  empty: ReactNode;
  loaded?: boolean;
  rowProps?(row: Row): HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, string | undefined>;
};

/**
 * The console's table: a header row, one row per item, an empty state instead of a bare header. Wider
 * than its room, it scrolls sideways inside its own box (the first column stays put), never the page;
 * on a phone each row is a card of captioned lines (styles.css), so nothing is cut and every action shows.
 */
export function DataTable<Row>({ rows, columns, rowKey, label, labelledBy, empty, loaded = true, rowProps }: Props<Row>) {
  const shown = columns.filter((column) => column.when !== false);
  if (rows.length === 0) return loaded ? <p className="muted empty-state">{empty}</p> : null;
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table className="data-table" aria-label={labelledBy ? undefined : label} aria-labelledby={labelledBy}>
        <thead>
          <tr>
            {shown.map((column, index) => (
              <th key={index} scope="col">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {shown.map((column, index) => (
                <td key={index} className={column.className} data-label={column.header}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

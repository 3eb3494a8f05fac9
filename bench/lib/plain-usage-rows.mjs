// The alternative to the usage store's generated column block, for
// `usage-writer.mjs --transport`: plain records cloned to the writer thread
// (what postMessage does to an array of objects: v8's serializer on the
// sending thread, its deserializer on the receiving one) and each row built by
// a loop over the column declaration (REQUEST_COLUMNS), cell by cell, as the
// block reader's cells are (numbers not finite → null, or 0 in a column that
// must hold one; booleans 0/1; lists as their stored JSON text).

function numberCell(value, nullable) {
  return typeof value === 'number' && Number.isFinite(value) ? value : nullable ? null : 0;
}

function fieldCell(field, item) {
  const value = item[field.field];
  if (field.kind === 'boolean') return value ? 1 : 0;
  if (field.kind === 'dictionary-string') return value ?? null;
  return numberCell(value, field.nullable);
}

function itemOf(list, item) {
  if (list.stored === 'value lists') return list.fields.map((field) => fieldCell(field, item));
  const out = {};
  for (const field of list.fields) out[field.field] = fieldCell(field, item);
  return out;
}

/** Puts record `r`'s cells into `values` from `at` on, in declaration order; `rowId` makes the id. */
export function plainRow(columns, r, rowId, values, at) {
  let k = at;
  for (const column of columns) {
    if (column.kind === 'row-id') {
      values[k++] = rowId(r.time);
      continue;
    }
    const value = 'read' in column ? column.read(r) : r[column.field];
    switch (column.kind) {
      case 'boolean':
        values[k++] = value ? 1 : 0;
        break;
      case 'integer':
      case 'real':
      case 'time':
        values[k++] = numberCell(value, column.nullable !== false);
        break;
      case 'json':
        values[k++] = JSON.stringify(value.map((item) => itemOf(column.list, item)));
        break;
      default:
        values[k++] = value ?? null;
    }
  }
}

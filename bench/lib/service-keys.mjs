// Service keys for the `keys` rows: `count` keys created through the admin
// API as an operator creates them (POST /admin/keys), a few at a time; the
// secrets come back once, as they do for a user.
/** Service keys the `keys` row's gateway holds (the figure). */
export const SERVICE_KEYS = 1_000;

export async function createServiceKeys(url, adminKey, count) {
  const secrets = [];
  const PARALLEL = 8;
  for (let start = 0; start < count; start += PARALLEL) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + PARALLEL); i += 1) {
      batch.push(
        fetch(`${url}/admin/keys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `bench-service-${i}`, description: 'bench: auth among many keys' }),
        }).then(async (response) => {
          const body = await response.json();
          if (response.status !== 201) throw new Error(`POST /admin/keys answered ${response.status}: ${JSON.stringify(body)}`);
          return body.key;
        }),
      );
    }
    secrets.push(...(await Promise.all(batch)));
  }
  return secrets;
}

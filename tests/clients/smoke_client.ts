// The generated TypeScript client against a running server (compiled with the client by
// tests/clients with tsc --strict, then run with node):
//
//     node smoke_client.js BASE_URL API_KEY NUMBER OTHER_NUMBER UNKNOWN_NUMBER
//
// Looks NUMBER up, sends [OTHER_NUMBER, NUMBER, UNKNOWN_NUMBER] as a batch and runs a discovery
// search (city=Los Angeles), looks up an ambiguous number (the 300's candidates, typed) and,
// with a client without a key, a demo number, then prints what the client decoded as one JSON
// object.

import { createClient } from '../typescript/src/client';
import { batchPermitStatus, getPermitStatus, searchPermits } from '../typescript/src';
import type { BatchResponse, PermitStatus, SearchResponse } from '../typescript/src';

// The only Node.js global used (no @types/node in the toolchain).
declare const process: { argv: string[]; exitCode?: number };

function check(condition: unknown, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

async function main(): Promise<void> {
  const [baseUrl, apiKey, number, other, unknown] = process.argv.slice(2);
  check(baseUrl && apiKey && number && other && unknown, 'five arguments expected');
  const client = createClient({ baseUrl, auth: apiKey });

  const status = await getPermitStatus({ client, path: { permit_number: number } });
  check(status.response.status === 200, `status: ${status.response.status} ${JSON.stringify(status.error)}`);
  const answer = status.data; // PermitStatus | OperationOut (a 202) | undefined
  check(answer !== undefined && 'status_phase' in answer, 'status: no permit status record');
  const record: PermitStatus = answer;

  const batch = await batchPermitStatus({
    client,
    body: { permit_numbers: [other, number, unknown] },
  });
  check(batch.response.status === 200, `batch: ${batch.response.status} ${JSON.stringify(batch.error)}`);
  check(batch.data !== undefined, 'batch: no body');
  const answered: BatchResponse = batch.data;

  const search = await searchPermits({ client, query: { city: 'Los Angeles', limit: 5 } });
  check(search.response.status === 200, `search: ${search.response.status} ${JSON.stringify(search.error)}`);
  check(search.data !== undefined, 'search: no body');
  const found: SearchResponse = search.data;

  // A 300 is not ok, so it lands in `error`: typed, its candidates compile.
  const ambiguous = await getPermitStatus({ client, path: { permit_number: 'BLD24-00123' } });
  check(ambiguous.response.status === 300, `ambiguous: ${ambiguous.response.status}`);
  const problem = ambiguous.error;
  check(problem !== undefined && 'candidates' in problem, 'ambiguous: no candidates');
  const slugs: string[] = problem.candidates.map((candidate) => candidate.slug);

  const keyless = createClient({ baseUrl });
  const demo = await getPermitStatus({ client: keyless, path: { permit_number: '21030-20000-00256' } });
  check(demo.data !== undefined && 'status_phase' in demo.data, `keyless: ${demo.response.status}`);

  const summary = {
    status: {
      permit_number: record.permit_number,
      jurisdiction: record.jurisdiction,
      status_phase: record.status_phase,
      source: record.source,
      age_seconds: record.data_freshness.age_seconds,
      rate_limit_remaining: status.response.headers.get('X-RateLimit-Remaining'),
    },
    batch: {
      results: answered.results.map((result) => result.permit_number).sort(),
      errors: answered.errors.map((error) => error.permit_number).sort(),
    },
    search: {
      result_count: found.result_count,
      results: found.results.map((hit) => [hit.jurisdiction, hit.permit_number]),
    },
    ambiguous: { status: ambiguous.response.status, candidates: slugs },
    keyless: {
      permit_number: demo.data.permit_number,
      demo_mode: demo.response.headers.get('X-Demo-Mode'),
    },
  };
  console.log(JSON.stringify(summary));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

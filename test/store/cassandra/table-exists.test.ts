/** tableExistsAgreed: a table the answering node lacks is asked again once the nodes agree; a lasting disagreement is an error, never "missing". */
import type { Client } from 'cassandra-driver';
import { isAdjunctError } from '../../../src/errors';
import { CqlExecutor, tableExistsAgreed } from '../../../src/store/cassandra';

/** A client whose system_schema.tables reads answer `answers` in turn and whose schema agreement checks answer `agreement` in turn. */
function schemaClient(answers: boolean[], agreement: boolean[]) {
  const seen = { reads: 0, agreementChecks: 0 };
  const client = {
    execute: async () => {
      const found = answers[Math.min(seen.reads++, answers.length - 1)];
      return { rows: found ? [{ table_name: 't' }] : [], rowLength: found ? 1 : 0 };
    },
    metadata: {
      checkSchemaAgreement: async () => agreement[Math.min(seen.agreementChecks++, agreement.length - 1)],
    },
  } as unknown as Client;
  return { exec: new CqlExecutor(client), seen };
}

describe('tableExistsAgreed', () => {
  it('a table the answering node holds is there, without waiting for agreement (a node that is down never hides it)', async () => {
    const { exec, seen } = schemaClient([true], [false]);
    await expect(tableExistsAgreed(exec, 'ks', 't', 300)).resolves.toBe(true);
    expect(seen).toEqual({ reads: 1, agreementChecks: 0 });
  });

  it('a missing answer is asked again once the nodes agree: the node had not caught up', async () => {
    const { exec, seen } = schemaClient([false, true], [false, true]);
    await expect(tableExistsAgreed(exec, 'ks', 't', 5_000)).resolves.toBe(true);
    expect(seen).toEqual({ reads: 2, agreementChecks: 2 });
  });

  it('missing as the agreeing nodes say is missing', async () => {
    const { exec } = schemaClient([false], [true]);
    await expect(tableExistsAgreed(exec, 'ks', 't', 300)).resolves.toBe(false);
  });

  it('missing on a node while the nodes disagree past the bound: a retriable SCHEMA_DISAGREEMENT naming the table', async () => {
    const { exec } = schemaClient([false], [false]);
    const err = await tableExistsAgreed(exec, 'ks', 't', 300).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAdjunctError(err) && { code: err.code, retriable: err.retriable, message: err.message }).toEqual({
      code: 'SCHEMA_DISAGREEMENT',
      retriable: true,
      message: expect.stringContaining('ks.t'),
    });
  });
});

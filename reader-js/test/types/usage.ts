// Compiled by `tsc -p test/types` (npm test): uses the API as the README and index.d.ts document it,
// so that a declaration that does not compile under --strict, or drifts from the documented use, fails.
import * as rla from '../../index.js';
import { type Archive, type Policy, RlarchiveError, open, validate, dump } from '../../index.js';

export async function documentedUse(path: string): Promise<number> {
  const archive: Archive = await open(path, { timeout: 10_000 });
  try {
    const version: string = archive.formatVersion;
    const algorithm = archive.metadata.algorithm;
    const groups: string[] = archive.groups;
    for (const info of archive.tensorInfo(groups[0] ?? 'policy')) {
      const t = await archive.tensor('policy', info.name, { verify: true });
      const n: number = t.shape.reduce((a, b) => a * b, 1);
      if (n !== t.data.length) throw new Error(`${version} ${algorithm}: ${t.name}`);
    }
    const digest: string = await archive.tensorSha256('policy', 'a');
    const policy: Policy | null = await archive.policy();
    if (policy !== null) {
      const { action, state } = policy.predict([0, 0, 0, 0], { state: null, episodeStart: [true] });
      const width: number | null = policy.maskWidth;
      console.log(action, state?.hidden, width);
      const actions = rla.act(policy, [[0, 0, 0, 0]], { episodeStarts: [true] });
      void actions.length;
    }
    const vn = await archive.vecNormalize();
    if (vn !== null) void vn.returns?.shape;
    const rb = await archive.replayBuffer();
    if (rb !== null) void rb;
    await archive.verify();
    const text: string = await archive.dump();
    return text.length + digest.length + archive.warnings.length + archive.evaluations.length;
  } finally {
    await archive.close();
  }
}

export async function reports(input: Uint8Array): Promise<string[]> {
  const report: rla.Report = await validate(input);
  const codes: string[] = report.issues.map(
    (i: rla.Issue) => `${i.code}@${i.member ?? ''}${i.pointer ?? ''}:${i.offset ?? ''}`,
  );
  try {
    await dump(input);
  } catch (e) {
    if (e instanceof RlarchiveError) {
      const code: rla.ErrorCode = e.code;
      codes.push(`${code} ${e.detail} ${e.severity}`);
    } else throw e;
  }
  return report.valid ? [] : codes;
}

export async function sources(url: string): Promise<number | undefined> {
  const src: rla.Source = new rla.MemorySource(new Uint8Array(8));
  const head: Uint8Array = await src.read(0, 4);
  const archive = await open(new URL(url), { headers: { 'x-test': '1' }, minRate: 65536 });
  const fetched = archive.bytesFetched;
  await archive.close();
  return head.length + (fetched ?? 0);
}

export const tables: number =
  Object.keys(rla.CATALOGUE).length + rla.SUPPORTED_EXTENSIONS.length + rla.DUMP_VERSION.length;

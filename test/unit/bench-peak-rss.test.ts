import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/paths';

// The benches judge a server's memory by the kernel's high-water mark, read from /proc.
const onLinux = process.platform === 'linux' ? it : it.skip;

describe("bench/common.mjs's peakRssBytes", () => {
  onLinux('holds a peak that came and went between two samples, which sampling alone misses', () => {
    // A child that holds 300 MB for a moment and gives it back; then one sample, and the peak.
    const script = `
      import { spawn } from 'node:child_process';
      import { peakRssBytes, rssBytes } from ${JSON.stringify(path.join(ROOT, 'bench', 'common.mjs'))};
      const child = spawn(process.execPath, ['--expose-gc', '-e', \`
        let held = Buffer.alloc(300 * 1024 * 1024, 1);
        held = null;
        gc();
        console.log('freed');
        setTimeout(() => {}, 60000);
      \`], { stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout.once('data', () => {
        const sampled = rssBytes(child.pid);
        const peak = peakRssBytes(child.pid, sampled);
        const kept = peakRssBytes(child.pid, sampled, 10 * 1024 ** 3);
        child.kill();
        console.log(JSON.stringify({ sampled, peak, kept }));
      });
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.stderr).toBe('');
    const { sampled, peak, kept } = JSON.parse(r.stdout) as { sampled: number; peak: number; kept: number };
    expect(peak).toBeGreaterThanOrEqual(300 * 1024 * 1024);
    expect(sampled).toBeLessThan(peak - 200 * 1024 * 1024);
    // Never less than what an earlier call answered.
    expect(kept).toBe(10 * 1024 ** 3);
  });
});

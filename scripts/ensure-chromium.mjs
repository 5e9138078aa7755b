// Runs before `npm test`: the browser suites drive Debian's Chromium (/usr/bin/chromium), never a
// browser downloaded from elsewhere. On a fresh machine where we are root with apt, it is installed
// here, so the README's two commands (`npm ci`, `npm test`) pass as they are. Where it cannot be
// installed, this stops the test command with the one command that fixes it, instead of letting
// the browser suites fail one by one (or be skipped).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const chromium = '/usr/bin/chromium';
const fix = 'sudo apt-get update && sudo apt-get install -y chromium';

if (!existsSync(chromium)) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = existsSync('/usr/bin/apt-get');
  if (!root || !apt) {
    console.error(`npm test: the browser suites need Debian's Chromium at ${chromium}, which is missing. Install it with:\n  ${fix}`);
    process.exit(1);
  }
  console.error(`npm test: installing Debian's Chromium for the browser suites (${chromium} is missing) …`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  } catch {
    console.error(`npm test: installing Chromium failed. Install it with:\n  ${fix}`);
    process.exit(1);
  }
  if (!existsSync(chromium)) {
    console.error(`npm test: apt-get installed chromium but ${chromium} is still missing. Install it with:\n  ${fix}`);
    process.exit(1);
  }
}

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import autocannon from 'autocannon';
const KEY='mg_bench_key_0123456789abcdef';
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' }); await admin.connect();
const name = 'dbg_' + Date.now(); await admin.query(`CREATE DATABASE ${name}`);
const env = { ...process.env, DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}`, MEDIAGATE_DATA_DIR: '/tmp/dbg-'+name, MEDIAGATE_API_KEYS: KEY, MEDIAGATE_ENGINE: 'instant', MEDIAGATE_INSTANT_DELAY_MS: process.argv[2] ?? '60000', MEDIAGATE_CONCURRENCY: '50', LOG_LEVEL: 'warn', PORT: '18931', MEDIAGATE_RATE_LIMIT_PER_MIN: '0', MEDIAGATE_MAX_TASKS_IN_FLIGHT: '0' };
const api = spawn(process.execPath, ['dist/cli/main.js','serve','--no-workers'], { env, stdio: 'inherit' });
await new Promise(r => setTimeout(r, 3000));
const worker = spawn(process.execPath, ['dist/cli/main.js','worker'], { env: { ...env, PORT: '0' }, stdio: 'ignore' });
await new Promise(r => setTimeout(r, 3000));
const H = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const ids: string[] = [];
for (let i = 0; i < 200; i++) { const r = await fetch('http://127.0.0.1:18931/v1/video/generations', { method: 'POST', headers: H, body: JSON.stringify({ model: 'vendora/famw-2.7-t2v', prompt: 'x', duration: 4 }) }); ids.push(((await r.json()) as {id:string}).id); }
const cpu = () => { const f = readFileSync(`/proc/${api.pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10000; };
const m = async () => (await (await fetch('http://127.0.0.1:18931/metrics')).text()).split('\n').filter(l => l.startsWith('mediagate_http_fast_polls_total'))[0];
async function run(label: string) {
  let next = 0;
  const c0 = cpu(); const f0 = await m();
  const res = await autocannon({ url: 'http://127.0.0.1:18931', connections: 50, duration: 4, requests: [{ method: 'GET', headers: H, setupRequest: (r: any) => ({ ...r, path: `/v1/video/generations/${ids[(next = (next + 1) % ids.length)]}` }) }] } as any);
  const used = cpu() - c0;
  console.log(label, res.requests.total, 'req', (used / res.requests.total).toFixed(1), 'µs/req', f0, await m(), 'non2xx', res.non2xx);
}
await run('running');
await new Promise(r => setTimeout(r, Number(process.argv[3] ?? 0)));
await run('later');
api.kill(); worker.kill(); await new Promise(r => setTimeout(r, 1500));
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`); await admin.end();

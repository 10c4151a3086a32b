import pg from 'pg';
import { startCluster, createDatabase, uniqueDatabaseName } from './src/index.ts';
let t = performance.now();
const c = await startCluster({ log: (l) => console.log('[log]', l) });
console.log('start ms', performance.now() - t, c.adminUrl);
const a = new pg.Client(c.adminUrl); await a.connect();
console.log((await a.query('select version()')).rows[0]);
await a.end();
const tpl = await createDatabase(c.adminUrl, 'tpl');
const tc = new pg.Client(tpl); await tc.connect();
await tc.query('create table t(id int primary key, v text)'); await tc.query("insert into t select g, 'x' from generate_series(1,1000) g"); await tc.end();
for (let i = 0; i < 5; i++) { t = performance.now(); await createDatabase(c.adminUrl, uniqueDatabaseName('x'), { template: 'tpl' }); console.log('create ms', performance.now() - t); }
t = performance.now(); await c.restart(); console.log('restart ms', performance.now() - t);
t = performance.now(); await c.stop(); await c.stop(); console.log('stop ms', performance.now() - t);

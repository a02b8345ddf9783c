/** Bare Express 5: no middleware at all, one route answering fixed bytes (the service's tools/list reply). */
import fs from 'node:fs';
import express from 'express';

const body = fs.readFileSync(process.env.BODY_FILE ?? '');
const app = express();
app.post('/mcp', (req, res) => {
  req.resume();
  req.on('end', () => {
    res.type('application/json').send(body);
  });
});
app.listen(Number(process.env.PORT), '127.0.0.1');

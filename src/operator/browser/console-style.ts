/** The console's style sheet, served as /assets/console.css (the CSP allows styles from this origin only). */
export const CONSOLE_STYLE = `
:root { font-family: system-ui, sans-serif; color: #1d232b; background: #f5f6f8; }
body { margin: 0 auto; max-width: 70rem; padding: 1rem 1.5rem 3rem; }
header { display: flex; justify-content: space-between; align-items: baseline; border-bottom: 1px solid #c9ced6; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 2rem; } h3 { font-size: 1rem; margin: 0 0 .5rem; }
code, .mono { font-family: ui-monospace, monospace; font-size: .85rem; word-break: break-all; }
section.card { background: #fff; border: 1px solid #c9ced6; border-radius: 6px; padding: 1rem; margin: 1rem 0; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #e3e6ea; }
th { font-weight: 600; white-space: nowrap; }
.figures th { width: 12rem; }
.computed { border-left: 4px solid #2a6ad8; padding-left: .75rem; }
.agent { border-left: 4px solid #c77d00; background: #fff8ea; padding: .5rem .75rem; margin-top: .75rem; }
.agent .label { font-size: .8rem; font-weight: 600; color: #8a5600; margin: 0 0 .25rem; }
.agent blockquote { margin: 0; white-space: pre-wrap; word-break: break-word; }
.negative { color: #b3261e; } .positive { color: #1e7b34; }
button { font: inherit; padding: .35rem .9rem; border-radius: 4px; border: 1px solid #7a828e; background: #fff; cursor: pointer; }
button.approve { background: #1e7b34; color: #fff; border-color: #1e7b34; }
button.reject { background: #b3261e; color: #fff; border-color: #b3261e; }
.actions { display: flex; gap: .75rem; margin-top: .75rem; }
#status { min-height: 1.5rem; margin: .5rem 0; }
#status[data-kind="error"] { color: #b3261e; } #status[data-kind="ok"] { color: #1e7b34; }
.verdict-ok { color: #1e7b34; font-weight: 600; } .verdict-broken { color: #b3261e; font-weight: 600; }
.halted { color: #b3261e; font-weight: 600; }
.policy-now { color: #b3261e; border: 1px solid #b3261e; border-radius: 4px; padding: 0.4em 0.6em; }
form.inline { display: flex; gap: .5rem; } form.inline input { flex: 1; min-width: 8rem; }
.muted { color: #5d6673; font-size: .85rem; }
`;

// Fails loudly when the scripts run on a Node older than 24 (the `node` package in dependencies provides 24;
// running a tool straight from node_modules/.bin with the system Node 20 is the usual cause).
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `Node ${process.versions.node} is too old: this project needs Node 24 (installed by \`npm install\` as the \`node\` package). Run scripts through npm run / npx, or scripts/start and scripts/test.`,
  );
  process.exit(1);
}

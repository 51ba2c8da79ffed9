// Preload for Node test peers: make every TCP server that would listen on all
// interfaces (listen(port) / listen({port}) with no host) listen on 127.0.0.1.
//
// server-everything (streamableHttp / sse) and the conformance mock servers call
// app.listen(PORT) / app.listen(0) without a host, which binds 0.0.0.0/::. Use:
//   node --require /abs/tests/interop/loopback_only.cjs .../dist/index.js streamableHttp
// or NODE_OPTIONS="--require /abs/tests/interop/loopback_only.cjs" for the conformance CLI.
//
// The conformance scenarios read server.address().port synchronously right after
// listen(0); Node binds asynchronously whenever a host is given, so the socket is
// bound here synchronously on a TCP handle and the server listens on that handle.
'use strict';
const net = require('net');
const HOST = process.env.MCP_INTEROP_BIND_HOST || '127.0.0.1';
const origListen = net.Server.prototype.listen;

let TCP = null;
let TCPConstants = null;
try {
  const origEmitWarning = process.emitWarning;
  process.emitWarning = () => {}; // silence DEP0111 for this one lookup
  try {
    ({ TCP, constants: TCPConstants } = process.binding('tcp_wrap'));
  } finally {
    process.emitWarning = origEmitWarning;
  }
} catch (_) {
  TCP = null;
}

function boundHandle(port) {
  if (!TCP) return null;
  const handle = new TCP(TCPConstants.SERVER);
  const err = handle.bind(HOST, port);
  if (err) {
    handle.close();
    return null; // let the normal (async) path report EADDRINUSE etc.
  }
  return handle;
}

function splitArgs(args) {
  // (port[, host][, backlog][, cb]) or (options[, cb])
  const cb = typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
  return cb;
}

net.Server.prototype.listen = function patchedListen(...args) {
  const a0 = args[0];
  let port = null;
  let backlog;
  if (a0 !== null && typeof a0 === 'object' && !Array.isArray(a0)) {
    if (a0.path !== undefined || a0.handle !== undefined || a0._handle !== undefined
        || a0.fd !== undefined || a0.host !== undefined || (TCP && a0 instanceof TCP)) {
      return origListen.apply(this, args);
    }
    port = a0.port === undefined ? 0 : Number(a0.port);
    backlog = a0.backlog;
  } else if (typeof a0 === 'number' || (typeof a0 === 'string' && /^\d+$/.test(a0))) {
    if (typeof args[1] === 'string') return origListen.apply(this, args); // host given
    port = Number(a0);
    if (typeof args[1] === 'number') backlog = args[1];
  } else if (a0 === undefined || typeof a0 === 'function') {
    port = 0;
  } else {
    return origListen.apply(this, args);
  }
  const cb = splitArgs(args);
  const handle = boundHandle(port);
  if (handle) {
    return origListen.call(this, { handle, backlog }, cb);
  }
  return origListen.call(this, { port, host: HOST, backlog }, cb);
};

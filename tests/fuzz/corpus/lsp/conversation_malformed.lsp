{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
[{"jsonrpc":"2.0","id":2,"method":"shutdown"}]
{"jsonrpc":"2.0","id":2.5,"method":"textDocument/hover","params":{}}
{"jsonrpc":"2.0","id":3,"method":42}
{"jsonrpc":"2.0","id":4}
{"jsonrpc":"2.0","id":5,"result":null}
{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":[1,2]}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///m.ag","version":1,"text":"# Elementwise vector addition: out = x + y, one tile of BLOCK elements per block.\n@kernel(grid=(cdiv(N, BLOCK),), warps=4)\ndef vadd(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)], out: Tensor[f32, (N,)],\n         BLOCK: const = 1024):\n    i = program_id(0)\n    a = load(x.tile((BLOCK,))[i])\n    b = load(y.tile((BLOCK,))[i])\n    out.tile((BLOCK,))[i] = a + b\n# run: --size N=3001\n"}}}
{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///m.ag"},"position":{"line":"one","character":0}}}
{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///m.ag"},"position":{"line":99999,"character":99999}}}
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///m.ag","version":2},"contentChanges":[{"range":7,"text":"x"}]}}
{"jsonrpc":"2.0","id":9,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///m.ag"},"position":{"line":6,"character":4},"newName":"while"}}
{"jsonrpc":"2.0","id":10,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}

{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/typo.ag","languageId":"argus","version":1,"text":"# A kernel with mistakes, to show what Argus's diagnostics look like.\n@kernel(grid=(cdiv(N, BLOCK),), warps=4)\ndef vadd(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)], out: Tensor[f32, (N,)],\n         BLOCK: const = 1000):\n    i = program_id(0)\n    a = load(x.tile((BLOCK,))[i])\n    b = laod(y.tile((BLOCK,))[i])\n    out.tile((BLOCK,))[i] = a + b\n"}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///work/typo.ag"},"range":{"start":{"line":6,"character":9},"end":{"line":6,"character":9}},"context":{"diagnostics":[]}}}
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///work/typo.ag","version":2},"contentChanges":[{"range":{"start":{"line":6,"character":8},"end":{"line":6,"character":12}},"text":"load"},{"range":{"start":{"line":3,"character":24},"end":{"line":3,"character":28}},"text":"1024"}]}}
{"jsonrpc":"2.0","id":3,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///work/typo.ag"},"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{"diagnostics":[]}}}
{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///work/typo.ag"}}}
{"jsonrpc":"2.0","id":4,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}

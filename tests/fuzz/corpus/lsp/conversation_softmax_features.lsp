{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/softmax.ag","languageId":"argus","version":1,"text":"# Row softmax: each block normalizes ROWS rows of at most BN elements.\n# Elements past the end of a row read -inf, so they add exp(-inf) = 0 to the sum;\n# the row maximum broadcasts back against the tile at no cost (same layout parent).\n@kernel(grid=(cdiv(M, ROWS),), warps=4)\ndef softmax(x: Tensor[f32, (M, N)], y: Tensor[f32, (M, N)],\n            ROWS: const = 4, BN: const = 1024):\n    require(N <= BN, \"a row must fit in one tile: N <= BN\")\n    r = program_id(0)\n    t = load(x.tile((ROWS, BN))[r, 0], other=-inf)\n    m = max(t, axis=1)\n    e = exp(t - m)\n    s = sum(e, axis=1)\n    y.tile((ROWS, BN))[r, 0] = e / s\n# run: --size M=37 --size N=1000\n"}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":9,"character":4}}}
{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":10,"character":12}}}
{"jsonrpc":"2.0","id":4,"method":"textDocument/references","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":4,"character":12},"context":{"includeDeclaration":true}}}
{"jsonrpc":"2.0","id":5,"method":"textDocument/prepareRename","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":5,"character":13}}}
{"jsonrpc":"2.0","id":6,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":5,"character":13},"newName":"ROWS_PER_BLOCK"}}
{"jsonrpc":"2.0","id":7,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":9,"character":8},"newName":"maximum_row"}}
{"jsonrpc":"2.0","id":8,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///work/softmax.ag"}}}
{"jsonrpc":"2.0","id":9,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"range":{"start":{"line":0,"character":0},"end":{"line":13,"character":0}}}}
{"jsonrpc":"2.0","id":10,"method":"textDocument/signatureHelp","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":8,"character":49}}}
{"jsonrpc":"2.0","id":11,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}

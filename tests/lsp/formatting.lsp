# Formatting: the canonical formatter (argusc format) as line edits.
>>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
<<< {"jsonrpc":"2.0","id":1,"result":"<any>"}
# A kernel written carelessly.
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/messy.ag","languageId":"argus","version":1,"text":"@kernel(grid = (cdiv(N, BLOCK),), warps=4)\ndef vadd(x: Tensor[f32, (N,)], y: Tensor[f32, (N,)], out: Tensor[f32, (N,)],\n      BLOCK:const=1024):\n  i=program_id(0)   #the block\n  a = load(x.tile((BLOCK,))[i])\n\n\n\n\n  out.tile((BLOCK,))[i]=a+load(y.tile((BLOCK,))[i])\n"}}}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":"<any>"}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":"<any>"}
# The whole document: one edit per line that changes (the extra blank lines go).
>>> {"jsonrpc":"2.0","id":2,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///work/messy.ag"},"options":{"tabSize":4,"insertSpaces":true}}}
<<< {
  "id": 2,
  "jsonrpc": "2.0",
  "result": [
    {
      "newText": "@kernel(grid=(cdiv(N, BLOCK),), warps=4)\n",
      "range": {
        "end": {
          "character": 0,
          "line": 1
        },
        "start": {
          "character": 0,
          "line": 0
        }
      }
    },
    {
      "newText": "         BLOCK: const = 1024):\n    i = program_id(0)  # the block\n    a = load(x.tile((BLOCK,))[i])\n",
      "range": {
        "end": {
          "character": 0,
          "line": 5
        },
        "start": {
          "character": 0,
          "line": 2
        }
      }
    },
    {
      "newText": "    out.tile((BLOCK,))[i] = a + load(y.tile((BLOCK,))[i])\n",
      "range": {
        "end": {
          "character": 0,
          "line": 10
        },
        "start": {
          "character": 0,
          "line": 7
        }
      }
    }
  ]
}
# Only lines 3 and 4 (0-based): the edits that touch them.
>>> {"jsonrpc":"2.0","id":3,"method":"textDocument/rangeFormatting","params":{"textDocument":{"uri":"file:///work/messy.ag"},"range":{"start":{"line":3,"character":0},"end":{"line":4,"character":5}},"options":{"tabSize":4,"insertSpaces":true}}}
<<< {
  "id": 3,
  "jsonrpc": "2.0",
  "result": [
    {
      "newText": "         BLOCK: const = 1024):\n    i = program_id(0)  # the block\n    a = load(x.tile((BLOCK,))[i])\n",
      "range": {
        "end": {
          "character": 0,
          "line": 5
        },
        "start": {
          "character": 0,
          "line": 2
        }
      }
    }
  ]
}
# An example is already canonical: no edits.
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/softmax.ag","languageId":"argus","version":1,"text":"@file:examples/softmax.ag"}}}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":"<any>"}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":"<any>"}
>>> {"jsonrpc":"2.0","id":4,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"options":{"tabSize":4,"insertSpaces":true}}}
<<< {
  "id": 4,
  "jsonrpc": "2.0",
  "result": []
}
# A document with a syntax error is never reformatted: null.
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/broken.ag","languageId":"argus","version":1,"text":"@kernel(grid=(1,), warps=1)\ndef k(x: Tensor[f32, (16,)]):\n    t = (1 +\n"}}}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":"<any>"}
>>> {"jsonrpc":"2.0","id":5,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///work/broken.ag"},"options":{"tabSize":4,"insertSpaces":true}}}
<<< {
  "id": 5,
  "jsonrpc": "2.0",
  "result": null
}
# The session ends cleanly.
>>> {"jsonrpc":"2.0","id":6,"method":"shutdown"}
<<< {"jsonrpc":"2.0","id":6,"result":null}
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 0

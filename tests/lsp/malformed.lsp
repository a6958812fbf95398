# Messages that are JSON but not valid JSON-RPC requests get an error response
# (or, for notifications, a logged warning); the server carries on.
>>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
<<< {"jsonrpc":"2.0","id":1,"result":"<any>"}
# A batch (JSON-RPC arrays are not used by LSP).
>>> [{"jsonrpc":"2.0","id":2,"method":"shutdown"}]
<<< {
  "error": {
    "code": -32600,
    "message": "a JSON-RPC message must be an object"
  },
  "id": null,
  "jsonrpc": "2.0"
}
# An id that is neither an integer nor a string.
>>> {"jsonrpc":"2.0","id":2.5,"method":"textDocument/hover","params":{}}
<<< {
  "error": {
    "code": -32600,
    "message": "'id' must be an integer or a string"
  },
  "id": null,
  "jsonrpc": "2.0"
}
# A method that is not a string.
>>> {"jsonrpc":"2.0","id":3,"method":42}
<<< {
  "error": {
    "code": -32600,
    "message": "'method' must be a string"
  },
  "id": 3,
  "jsonrpc": "2.0"
}
# No method at all.
>>> {"jsonrpc":"2.0","id":4}
<<< {
  "error": {
    "code": -32600,
    "message": "a request needs a 'method'"
  },
  "id": 4,
  "jsonrpc": "2.0"
}
# A response from the client (we never send requests): ignored.
>>> {"jsonrpc":"2.0","id":5,"result":null}
# Params of the wrong shape.
>>> {"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":[1,2]}
<<< {
  "error": {
    "code": -32602,
    "message": "'params.textDocument.uri' is missing"
  },
  "id": 6,
  "jsonrpc": "2.0"
}
# ---
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///m.ag","version":1,"text":"@file:examples/vadd.ag"}}}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [],
    "uri": "file:///m.ag",
    "version": 1
  }
}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"diagnostics":[],"uri":"file:///m.ag","version":1}}
# A position that is not a position, and one far outside the document.
>>> {"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///m.ag"},"position":{"line":"one","character":0}}}
<<< {
  "error": {
    "code": -32602,
    "message": "'params.position' is missing or not a position"
  },
  "id": 7,
  "jsonrpc": "2.0"
}
# ---
>>> {"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///m.ag"},"position":{"line":99999,"character":99999}}}
<<< {
  "id": 8,
  "jsonrpc": "2.0",
  "result": null
}
# A content change that is not one: the whole notification is ignored, so the
# document is unchanged and no diagnostics are published.
>>> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///m.ag","version":2},"contentChanges":[{"range":7,"text":"x"}]}}
# A rename to a keyword.
>>> {"jsonrpc":"2.0","id":9,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///m.ag"},"position":{"line":6,"character":4},"newName":"while"}}
<<< {
  "error": {
    "code": -32602,
    "message": "'while' is a keyword, builtin or dtype; pick another name"
  },
  "id": 9,
  "jsonrpc": "2.0"
}
# ---
>>> {"jsonrpc":"2.0","id":10,"method":"shutdown"}
<<< {
  "id": 10,
  "jsonrpc": "2.0",
  "result": null
}
# ---
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 0

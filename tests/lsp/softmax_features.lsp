# Navigation and information on the softmax example.
>>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
<<< {"jsonrpc":"2.0","id":1,"result":"<any>"}
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/softmax.ag","languageId":"argus","version":1,"text":"@file:tests/lsp/softmax.ag"}}}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [],
    "uri": "file:///work/softmax.ag",
    "version": 1
  }
}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"diagnostics":[],"uri":"file:///work/softmax.ag","version":1}}
# Hover on the row maximum `m`: a reduced register tile, replicated over a warp.
>>> {"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":9,"character":4}}}
<<< {
  "id": 2,
  "jsonrpc": "2.0",
  "result": {
    "contents": {
      "kind": "markdown",
      "value": "**m**: local variable\n\n```\ntile<f32, [4, 1], #blocked<[4, 1024], reduced=[1]>>\n```\n\n| | |\n|---|---|\n| kind | register tile |\n| dtype | f32 |\n| shape | (4, 1) |\n| memory | registers |\n| layout | `#blocked<[4, 1024], reduced=[1]>` |\n| per thread | 1 value |\n\nWhich thread holds which element (4 warps):\n\n| | 0 |\n|---|---|\n| **0** | t0 v0 |\n| **1** | t32 v0 |\n| **2** | t64 v0 |\n| **3** | t96 v0 |\n\n(`tT vV`: thread T holds it as its value V; each element is replicated in 32 threads)"
    },
    "range": {
      "end": {
        "character": 5,
        "line": 9
      },
      "start": {
        "character": 4,
        "line": 9
      }
    }
  }
}
# Go to the definition of `t` from its use in `exp(t - m)`.
>>> {"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":10,"character":12}}}
<<< {
  "id": 3,
  "jsonrpc": "2.0",
  "result": {
    "range": {
      "end": {
        "character": 5,
        "line": 8
      },
      "start": {
        "character": 4,
        "line": 8
      }
    },
    "uri": "file:///work/softmax.ag"
  }
}
# References of the parameter `x`.
>>> {"jsonrpc":"2.0","id":4,"method":"textDocument/references","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":4,"character":12},"context":{"includeDeclaration":true}}}
<<< {
  "id": 4,
  "jsonrpc": "2.0",
  "result": [
    {
      "range": {
        "end": {
          "character": 13,
          "line": 4
        },
        "start": {
          "character": 12,
          "line": 4
        }
      },
      "uri": "file:///work/softmax.ag"
    },
    {
      "range": {
        "end": {
          "character": 14,
          "line": 8
        },
        "start": {
          "character": 13,
          "line": 8
        }
      },
      "uri": "file:///work/softmax.ag"
    }
  ]
}
# Rename the constant ROWS.
>>> {"jsonrpc":"2.0","id":5,"method":"textDocument/prepareRename","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":5,"character":13}}}
<<< {
  "id": 5,
  "jsonrpc": "2.0",
  "result": {
    "placeholder": "ROWS",
    "range": {
      "end": {
        "character": 16,
        "line": 5
      },
      "start": {
        "character": 12,
        "line": 5
      }
    }
  }
}
# ---
>>> {"jsonrpc":"2.0","id":6,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":5,"character":13},"newName":"ROWS_PER_BLOCK"}}
<<< {
  "id": 6,
  "jsonrpc": "2.0",
  "result": {
    "changes": {
      "file:///work/softmax.ag": [
        {
          "newText": "ROWS_PER_BLOCK",
          "range": {
            "end": {
              "character": 26,
              "line": 3
            },
            "start": {
              "character": 22,
              "line": 3
            }
          }
        },
        {
          "newText": "ROWS_PER_BLOCK",
          "range": {
            "end": {
              "character": 16,
              "line": 5
            },
            "start": {
              "character": 12,
              "line": 5
            }
          }
        },
        {
          "newText": "ROWS_PER_BLOCK",
          "range": {
            "end": {
              "character": 25,
              "line": 8
            },
            "start": {
              "character": 21,
              "line": 8
            }
          }
        },
        {
          "newText": "ROWS_PER_BLOCK",
          "range": {
            "end": {
              "character": 16,
              "line": 12
            },
            "start": {
              "character": 12,
              "line": 12
            }
          }
        }
      ]
    }
  }
}
# The builtin `max` cannot be renamed.
>>> {"jsonrpc":"2.0","id":7,"method":"textDocument/rename","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":9,"character":8},"newName":"maximum_row"}}
<<< {
  "error": {
    "code": -32602,
    "message": "'max' is a builtin and cannot be renamed"
  },
  "id": 7,
  "jsonrpc": "2.0"
}
# The outline.
>>> {"jsonrpc":"2.0","id":8,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///work/softmax.ag"}}}
<<< {
  "id": 8,
  "jsonrpc": "2.0",
  "result": [
    {
      "children": [
        {
          "detail": "Tensor[f32, (M, N)]",
          "kind": 13,
          "name": "x",
          "range": {
            "end": {
              "character": 34,
              "line": 4
            },
            "start": {
              "character": 12,
              "line": 4
            }
          },
          "selectionRange": {
            "end": {
              "character": 13,
              "line": 4
            },
            "start": {
              "character": 12,
              "line": 4
            }
          }
        },
        {
          "detail": "Tensor[f32, (M, N)]",
          "kind": 13,
          "name": "y",
          "range": {
            "end": {
              "character": 58,
              "line": 4
            },
            "start": {
              "character": 36,
              "line": 4
            }
          },
          "selectionRange": {
            "end": {
              "character": 37,
              "line": 4
            },
            "start": {
              "character": 36,
              "line": 4
            }
          }
        },
        {
          "detail": "const",
          "kind": 14,
          "name": "ROWS",
          "range": {
            "end": {
              "character": 27,
              "line": 5
            },
            "start": {
              "character": 12,
              "line": 5
            }
          },
          "selectionRange": {
            "end": {
              "character": 16,
              "line": 5
            },
            "start": {
              "character": 12,
              "line": 5
            }
          }
        },
        {
          "detail": "const",
          "kind": 14,
          "name": "BN",
          "range": {
            "end": {
              "character": 45,
              "line": 5
            },
            "start": {
              "character": 29,
              "line": 5
            }
          },
          "selectionRange": {
            "end": {
              "character": 31,
              "line": 5
            },
            "start": {
              "character": 29,
              "line": 5
            }
          }
        }
      ],
      "detail": "@kernel",
      "kind": 12,
      "name": "softmax",
      "range": {
        "end": {
          "character": 36,
          "line": 12
        },
        "start": {
          "character": 0,
          "line": 3
        }
      },
      "selectionRange": {
        "end": {
          "character": 11,
          "line": 4
        },
        "start": {
          "character": 4,
          "line": 4
        }
      }
    }
  ]
}
# Inferred shapes.
>>> {"jsonrpc":"2.0","id":9,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"range":{"start":{"line":0,"character":0},"end":{"line":13,"character":0}}}}
<<< {
  "id": 9,
  "jsonrpc": "2.0",
  "result": [
    {
      "kind": 1,
      "label": ": i32",
      "paddingLeft": false,
      "position": {
        "character": 5,
        "line": 7
      }
    },
    {
      "kind": 1,
      "label": ": f32 (4, 1024)",
      "paddingLeft": false,
      "position": {
        "character": 5,
        "line": 8
      },
      "tooltip": "#blocked<[4, 1024]>"
    },
    {
      "label": "layout #blocked<[4, 1024]>",
      "paddingLeft": true,
      "position": {
        "character": 50,
        "line": 8
      },
      "tooltip": "How the tile's elements are spread over threads (hover the name for the full map)."
    },
    {
      "kind": 1,
      "label": ": f32 (4, 1)",
      "paddingLeft": false,
      "position": {
        "character": 5,
        "line": 9
      },
      "tooltip": "#blocked<[4, 1024], reduced=[1]>"
    },
    {
      "label": "layout #blocked<[4, 1024], reduced=[1]>",
      "paddingLeft": true,
      "position": {
        "character": 22,
        "line": 9
      },
      "tooltip": "How the tile's elements are spread over threads (hover the name for the full map)."
    },
    {
      "kind": 1,
      "label": ": f32 (4, 1024)",
      "paddingLeft": false,
      "position": {
        "character": 5,
        "line": 10
      },
      "tooltip": "#blocked<[4, 1024]>"
    },
    {
      "label": "layout #blocked<[4, 1024]>",
      "paddingLeft": true,
      "position": {
        "character": 18,
        "line": 10
      },
      "tooltip": "How the tile's elements are spread over threads (hover the name for the full map)."
    },
    {
      "kind": 1,
      "label": ": f32 (4, 1)",
      "paddingLeft": false,
      "position": {
        "character": 5,
        "line": 11
      },
      "tooltip": "#blocked<[4, 1024], reduced=[1]>"
    },
    {
      "label": "layout #blocked<[4, 1024], reduced=[1]>",
      "paddingLeft": true,
      "position": {
        "character": 22,
        "line": 11
      },
      "tooltip": "How the tile's elements are spread over threads (hover the name for the full map)."
    }
  ]
}
# Inside `load(..., other=-inf)`: the second parameter is active.
>>> {"jsonrpc":"2.0","id":10,"method":"textDocument/signatureHelp","params":{"textDocument":{"uri":"file:///work/softmax.ag"},"position":{"line":8,"character":49}}}
<<< {
  "id": 10,
  "jsonrpc": "2.0",
  "result": {
    "activeParameter": 1,
    "activeSignature": 0,
    "signatures": [
      {
        "documentation": {
          "kind": "markdown",
          "value": "Read a view into registers; elements past the edge read `other`."
        },
        "label": "load(view, other=0) -> tile",
        "parameters": [
          {
            "label": "view"
          },
          {
            "label": "other=0"
          }
        ]
      }
    ]
  }
}
# ---
>>> {"jsonrpc":"2.0","id":11,"method":"shutdown"}
<<< {
  "id": 11,
  "jsonrpc": "2.0",
  "result": null
}
# ---
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 0

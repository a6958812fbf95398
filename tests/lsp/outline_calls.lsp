# Workspace symbols, folding and selection ranges, declaration, type definition,
# the call hierarchy, pull diagnostics and memory inlay hints on tests/lsp/calls.ag.
>>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"pullDiagnostics":true}}}
<<< {"jsonrpc":"2.0","id":1,"result":"<any>"}
# The front end's diagnostics at once, then the checker's (the group waits for both,
# so that what follows does not race the check).
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/calls.ag","languageId":"argus","version":1,"text":"@file:tests/lsp/calls.ag"}}}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [],
    "uri": "file:///work/calls.ag",
    "version": 1
  }
}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [],
    "uri": "file:///work/calls.ag",
    "version": 1
  }
}
# Workspace symbols: the query's letters in order, any case.
>>> {"jsonrpc":"2.0","id":2,"method":"workspace/symbol","params":{"query":"GM"}}
<<< {
  "id": 2,
  "jsonrpc": "2.0",
  "result": [
    {
      "containerName": "@kernel",
      "kind": 12,
      "location": {
        "range": {
          "end": {
            "character": 8,
            "line": 7
          },
          "start": {
            "character": 4,
            "line": 7
          }
        },
        "uri": "file:///work/calls.ag"
      },
      "name": "gemm"
    }
  ]
}
# Folding: each function, the loop, both branches of the if, the leading comment.
>>> {"jsonrpc":"2.0","id":3,"method":"textDocument/foldingRange","params":{"textDocument":{"uri":"file:///work/calls.ag"}}}
# Selection ranges from 'acc' in 'scale(acc, 2.0)' outwards.
>>> {"jsonrpc":"2.0","id":4,"method":"textDocument/selectionRange","params":{"textDocument":{"uri":"file:///work/calls.ag"},"positions":[{"line":17,"character":21}]}}
# Declaration (= definition) of scale from its call.
>>> {"jsonrpc":"2.0","id":5,"method":"textDocument/declaration","params":{"textDocument":{"uri":"file:///work/calls.ag"},"position":{"line":17,"character":15}}}
# Type definition of acc: the zeros(...) that made it.
>>> {"jsonrpc":"2.0","id":6,"method":"textDocument/typeDefinition","params":{"textDocument":{"uri":"file:///work/calls.ag"},"position":{"line":17,"character":8}}}
# Type definition of A: its Tensor annotation.
>>> {"jsonrpc":"2.0","id":7,"method":"textDocument/typeDefinition","params":{"textDocument":{"uri":"file:///work/calls.ag"},"position":{"line":13,"character":25}}}
# Call hierarchy: prepare on the device function's name, who calls it, what gemm calls.
>>> {"jsonrpc":"2.0","id":8,"method":"textDocument/prepareCallHierarchy","params":{"textDocument":{"uri":"file:///work/calls.ag"},"position":{"line":3,"character":6}}}
<<< {
  "id": 8,
  "jsonrpc": "2.0",
  "result": [
    {
      "data": {
        "name": "scale"
      },
      "detail": "@device",
      "kind": 12,
      "name": "scale",
      "range": {
        "end": {
          "character": 21,
          "line": 4
        },
        "start": {
          "character": 0,
          "line": 2
        }
      },
      "selectionRange": {
        "end": {
          "character": 9,
          "line": 3
        },
        "start": {
          "character": 4,
          "line": 3
        }
      },
      "uri": "file:///work/calls.ag"
    }
  ]
}
<<< {
  "id": 3,
  "jsonrpc": "2.0",
  "result": [
    {
      "endLine": 4,
      "startLine": 3
    },
    {
      "endLine": 20,
      "startLine": 7
    },
    {
      "endLine": 15,
      "startLine": 12
    },
    {
      "endLine": 17,
      "startLine": 16
    },
    {
      "endLine": 19,
      "startLine": 18
    },
    {
      "endLine": 1,
      "kind": "comment",
      "startLine": 0
    }
  ]
}
<<< {
  "id": 4,
  "jsonrpc": "2.0",
  "result": [
    {
      "parent": {
        "parent": {
          "parent": {
            "parent": {
              "parent": {
                "range": {
                  "end": {
                    "character": 0,
                    "line": 21
                  },
                  "start": {
                    "character": 0,
                    "line": 0
                  }
                }
              },
              "range": {
                "end": {
                  "character": 56,
                  "line": 20
                },
                "start": {
                  "character": 0,
                  "line": 6
                }
              }
            },
            "range": {
              "end": {
                "character": 29,
                "line": 19
              },
              "start": {
                "character": 4,
                "line": 16
              }
            }
          },
          "range": {
            "end": {
              "character": 29,
              "line": 17
            },
            "start": {
              "character": 8,
              "line": 17
            }
          }
        },
        "range": {
          "end": {
            "character": 29,
            "line": 17
          },
          "start": {
            "character": 14,
            "line": 17
          }
        }
      },
      "range": {
        "end": {
          "character": 23,
          "line": 17
        },
        "start": {
          "character": 20,
          "line": 17
        }
      }
    }
  ]
}
<<< {
  "id": 5,
  "jsonrpc": "2.0",
  "result": {
    "range": {
      "end": {
        "character": 9,
        "line": 3
      },
      "start": {
        "character": 4,
        "line": 3
      }
    },
    "uri": "file:///work/calls.ag"
  }
}
<<< {
  "id": 6,
  "jsonrpc": "2.0",
  "result": {
    "range": {
      "end": {
        "character": 30,
        "line": 11
      },
      "start": {
        "character": 10,
        "line": 11
      }
    },
    "uri": "file:///work/calls.ag"
  }
}
<<< {
  "id": 7,
  "jsonrpc": "2.0",
  "result": {
    "range": {
      "end": {
        "character": 31,
        "line": 7
      },
      "start": {
        "character": 12,
        "line": 7
      }
    },
    "uri": "file:///work/calls.ag"
  }
}
>>> {"jsonrpc":"2.0","id":9,"method":"callHierarchy/incomingCalls","params":{"item":{"name":"scale","kind":12,"uri":"file:///work/calls.ag","range":{"start":{"line":2,"character":0},"end":{"line":4,"character":21}},"selectionRange":{"start":{"line":3,"character":4},"end":{"line":3,"character":9}},"data":{"name":"scale"}}}}
<<< {
  "id": 9,
  "jsonrpc": "2.0",
  "result": [
    {
      "from": {
        "data": {
          "name": "gemm"
        },
        "detail": "@kernel",
        "kind": 12,
        "name": "gemm",
        "range": {
          "end": {
            "character": 56,
            "line": 20
          },
          "start": {
            "character": 0,
            "line": 6
          }
        },
        "selectionRange": {
          "end": {
            "character": 8,
            "line": 7
          },
          "start": {
            "character": 4,
            "line": 7
          }
        },
        "uri": "file:///work/calls.ag"
      },
      "fromRanges": [
        {
          "end": {
            "character": 19,
            "line": 17
          },
          "start": {
            "character": 14,
            "line": 17
          }
        },
        {
          "end": {
            "character": 19,
            "line": 19
          },
          "start": {
            "character": 14,
            "line": 19
          }
        }
      ]
    }
  ]
}
>>> {"jsonrpc":"2.0","id":10,"method":"callHierarchy/outgoingCalls","params":{"item":{"name":"gemm","kind":12,"uri":"file:///work/calls.ag","range":{"start":{"line":6,"character":0},"end":{"line":20,"character":0}},"selectionRange":{"start":{"line":7,"character":4},"end":{"line":7,"character":8}}}}}
<<< {
  "id": 10,
  "jsonrpc": "2.0",
  "result": [
    {
      "fromRanges": [
        {
          "end": {
            "character": 19,
            "line": 17
          },
          "start": {
            "character": 14,
            "line": 17
          }
        },
        {
          "end": {
            "character": 19,
            "line": 19
          },
          "start": {
            "character": 14,
            "line": 19
          }
        }
      ],
      "to": {
        "data": {
          "name": "scale"
        },
        "detail": "@device",
        "kind": 12,
        "name": "scale",
        "range": {
          "end": {
            "character": 21,
            "line": 4
          },
          "start": {
            "character": 0,
            "line": 2
          }
        },
        "selectionRange": {
          "end": {
            "character": 9,
            "line": 3
          },
          "start": {
            "character": 4,
            "line": 3
          }
        },
        "uri": "file:///work/calls.ag"
      }
    }
  ]
}
# Pull diagnostics: a full report, then "unchanged" for the same result id.
>>> {"jsonrpc":"2.0","id":11,"method":"textDocument/diagnostic","params":{"textDocument":{"uri":"file:///work/calls.ag"}}}
<<< {
  "id": 11,
  "jsonrpc": "2.0",
  "result": {
    "items": [],
    "kind": "full",
    "resultId": "1:1"
  }
}
>>> {"jsonrpc":"2.0","id":12,"method":"textDocument/diagnostic","params":{"textDocument":{"uri":"file:///work/calls.ag"},"previousResultId":"1:1"}}
<<< {
  "id": 12,
  "jsonrpc": "2.0",
  "result": {
    "kind": "unchanged",
    "resultId": "1:1"
  }
}
# Inlay hints: local types, tile layouts, shared bytes times the pipeline's stages, the copies' stages.
>>> {"jsonrpc":"2.0","id":13,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///work/calls.ag"},"range":{"start":{"line":0,"character":0},"end":{"line":30,"character":0}}}}
<<< {
  "id": 13,
  "jsonrpc": "2.0",
  "result": [
    {
      "kind": 1,
      "label": ": shared f32 (64, 16)",
      "paddingLeft": false,
      "position": {
        "character": 7,
        "line": 9
      }
    },
    {
      "label": "4 KiB × 3 stages = 12 KiB",
      "paddingLeft": true,
      "position": {
        "character": 31,
        "line": 9
      },
      "tooltip": "A pipelined loop's leading copies fill this buffer: the compiler keeps 3 copies of it, one per stage."
    },
    {
      "kind": 1,
      "label": ": shared f32 (16, 64)",
      "paddingLeft": false,
      "position": {
        "character": 7,
        "line": 10
      }
    },
    {
      "label": "4 KiB × 3 stages = 12 KiB",
      "paddingLeft": true,
      "position": {
        "character": 31,
        "line": 10
      },
      "tooltip": "A pipelined loop's leading copies fill this buffer: the compiler keeps 3 copies of it, one per stage."
    },
    {
      "kind": 1,
      "label": ": f32 (64, 64)",
      "paddingLeft": false,
      "position": {
        "character": 7,
        "line": 11
      },
      "tooltip": "#blocked<[64, 64]>"
    },
    {
      "label": "layout #blocked<[64, 64]>",
      "paddingLeft": true,
      "position": {
        "character": 30,
        "line": 11
      },
      "tooltip": "How the tile's elements are spread over threads (hover the name for the full map)."
    },
    {
      "label": "for kt + 2, stage (kt + 2) % 3",
      "paddingLeft": true,
      "position": {
        "character": 60,
        "line": 13
      },
      "tooltip": "A leading copy of a pipelined loop: issued 2 iteration(s) ahead, into stage (kt + 2) % 3 of its buffer."
    },
    {
      "label": "for kt + 2, stage (kt + 2) % 3",
      "paddingLeft": true,
      "position": {
        "character": 60,
        "line": 14
      },
      "tooltip": "A leading copy of a pipelined loop: issued 2 iteration(s) ahead, into stage (kt + 2) % 3 of its buffer."
    }
  ]
}
>>> {"jsonrpc":"2.0","id":14,"method":"shutdown"}
<<< {
  "id": 14,
  "jsonrpc": "2.0",
  "result": null
}
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 0

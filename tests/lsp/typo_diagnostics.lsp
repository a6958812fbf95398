# Opening a kernel with mistakes publishes the compiler's diagnostics (the same
# JSON as `argusc --diagnostics-format=json`); the fix-it becomes a preferred
# quick fix; fixing the text incrementally clears the diagnostics.
>>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
<<< {
  "jsonrpc": "2.0",
  "id": 1,
  "result": "<any>"
}
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///work/typo.ag","languageId":"argus","version":1,"text":"@file:examples/broken/typo.ag"}}}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [
      {
        "code": "AG4003",
        "codeDescription": {
          "href": "https://argus.dev/docs/diagnostics/AG4003.md"
        },
        "data": "<any>",
        "message": "<any>",
        "range": {
          "end": {
            "character": 26,
            "line": 5
          },
          "start": {
            "character": 21,
            "line": 5
          }
        },
        "relatedInformation": "<any>",
        "severity": 1,
        "source": "argus"
      },
      {
        "code": "AG3001",
        "codeDescription": {
          "href": "https://argus.dev/docs/diagnostics/AG3001.md"
        },
        "data": "<any>",
        "message": "<any>",
        "range": {
          "end": {
            "character": 12,
            "line": 6
          },
          "start": {
            "character": 8,
            "line": 6
          }
        },
        "relatedInformation": "<any>",
        "severity": 1,
        "source": "argus"
      }
    ],
    "uri": "file:///work/typo.ag",
    "version": 1
  }
}
# The quick fix for `laod`.
>>> {"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///work/typo.ag"},"range":{"start":{"line":6,"character":9},"end":{"line":6,"character":9}},"context":{"diagnostics":[]}}}
<<< {
  "id": 2,
  "jsonrpc": "2.0",
  "result": [
    {
      "diagnostics": [
        {
          "code": "AG3001",
          "codeDescription": {
            "href": "https://argus.dev/docs/diagnostics/AG3001.md"
          },
          "data": "<any>",
          "message": "<any>",
          "range": {
            "end": {
              "character": 12,
              "line": 6
            },
            "start": {
              "character": 8,
              "line": 6
            }
          },
          "relatedInformation": "<any>",
          "severity": 1,
          "source": "argus"
        }
      ],
      "edit": {
        "changes": {
          "file:///work/typo.ag": [
            {
              "newText": "load",
              "range": {
                "end": {
                  "character": 12,
                  "line": 6
                },
                "start": {
                  "character": 8,
                  "line": 6
                }
              }
            }
          ]
        }
      },
      "isPreferred": true,
      "kind": "quickfix",
      "title": "replace with 'load'"
    }
  ]
}
# Fix both mistakes with two incremental changes in one notification.
>>> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///work/typo.ag","version":2},"contentChanges":[{"range":{"start":{"line":6,"character":8},"end":{"line":6,"character":12}},"text":"load"},{"range":{"start":{"line":3,"character":24},"end":{"line":3,"character":28}},"text":"1024"}]}}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [],
    "uri": "file:///work/typo.ag",
    "version": 2
  }
}
<<< {"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"diagnostics":[],"uri":"file:///work/typo.ag","version":2}}
# No code actions are left.
>>> {"jsonrpc":"2.0","id":3,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"file:///work/typo.ag"},"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}},"context":{"diagnostics":[]}}}
<<< {
  "id": 3,
  "jsonrpc": "2.0",
  "result": []
}
# Closing clears the diagnostics.
>>> {"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///work/typo.ag"}}}
<<< {
  "jsonrpc": "2.0",
  "method": "textDocument/publishDiagnostics",
  "params": {
    "diagnostics": [],
    "uri": "file:///work/typo.ag"
  }
}
# ---
>>> {"jsonrpc":"2.0","id":4,"method":"shutdown"}
<<< {
  "id": 4,
  "jsonrpc": "2.0",
  "result": null
}
# ---
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 0

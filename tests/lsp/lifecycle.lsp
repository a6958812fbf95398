# Lifecycle: requests before `initialize` are refused with -32002, unknown
# requests get -32601, unknown notifications are ignored, `shutdown` then
# `exit` ends the server with exit code 0.
>>> {"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.ag"},"position":{"line":0,"character":0}}}
<<< {"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"<any>"}}
>>> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.ag","languageId":"argus","version":1,"text":"x"}}}
>>> {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{}}}
<<< {"jsonrpc":"2.0","id":2,"result":"<any>"}
>>> {"jsonrpc":"2.0","method":"initialized","params":{}}
>>> {"jsonrpc":"2.0","method":"$/someExtension","params":{}}
>>> {"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{}}
<<< {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"unsupported method 'workspace/executeCommand'"}}
>>> {"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.ag"},"position":{"line":0,"character":0}}}
<<< {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"the document is not open"}}
>>> {not json at all
<<< {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the message is not valid JSON"}}
>>> {"jsonrpc":"2.0","id":5,"method":"shutdown"}
<<< {"jsonrpc":"2.0","id":5,"result":null}
>>> {"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{}}
<<< {"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"the server is shut down: only 'exit' is accepted"}}
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 0

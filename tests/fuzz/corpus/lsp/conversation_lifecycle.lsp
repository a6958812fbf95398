{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.ag"},"position":{"line":0,"character":0}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.ag","languageId":"argus","version":1,"text":"x"}}}
{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"$/someExtension","params":{}}
{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{}}
{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.ag"},"position":{"line":0,"character":0}}}
{not json at all
{"jsonrpc":"2.0","id":5,"method":"shutdown"}
{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{}}
{"jsonrpc":"2.0","method":"exit"}

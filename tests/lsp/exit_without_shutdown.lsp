# `exit` without `shutdown` ends the server with exit code 1.
>>> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
<<< {"jsonrpc":"2.0","id":1,"result":"<any>"}
>>> {"jsonrpc":"2.0","method":"exit"}
!!! exit 1

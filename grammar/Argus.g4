// The Argus language: a Python-like surface for tile-based GPU kernels.
//
// One combined grammar. Indentation is not expressed here but by the token
// source: frontend/lexer.cpp turns the NEWLINE tokens below (which keep the
// next line's leading whitespace) into NEWLINE / INDENT / DEDENT, drops
// newlines inside brackets, and collapses blank and comment-only lines.
//
// The parse tree is never used directly: frontend/ast_builder*.cpp turns it
// into our own AST (frontend/ast.h). Every rule is written so that each
// decision needs one or two tokens of lookahead (no LL(*) scans), which keeps
// SLL prediction fast. A file with syntax errors is parsed again one logical
// line at a time, starting at `decorator`, the `*_header` rules and
// `simple_stmt` (frontend/parser.cpp), which is why headers are rules of their own.
grammar Argus;

tokens { INDENT, DEDENT }

// ---------------------------------------------------------------- structure

file_ : (NEWLINE | funcdef | stmt)* EOF ;

funcdef : decorator* def_header suite ;

decorator : '@' dotted_name (open='(' arglist? close=')')? NEWLINE ;
dotted_name : NAME ('.' NAME)* ;

def_header : 'def' NAME open='(' params? close=')' ('->' ret=expr)? ':' ;
params : param (',' param)* ','? ;
param : NAME (':' ann=expr)? ('=' dflt=expr)? ;

// A block on the following lines, or one simple statement after the ':'.
suite : NEWLINE INDENT stmt+ DEDENT | simple_stmt ;

stmt : simple_stmt | compound_stmt ;
compound_stmt : for_stmt | while_stmt | if_stmt ;

for_stmt : for_header suite ;
for_header : 'for' target=exprlist 'in' iter=exprlist ':' ;

while_stmt : while_header suite ;
while_header : 'while' expr ':' ;

if_stmt : if_header suite elif_clause* else_clause? ;
if_header : 'if' expr ':' ;
elif_clause : elif_header suite ;
elif_header : 'elif' expr ':' ;
else_clause : else_header suite ;
else_header : 'else' ':' ;

// ---------------------------------------------------------------- simple statements

simple_stmt : small_stmt NEWLINE ;

small_stmt
  : 'pass'                                  # passStmt
  | 'break'                                 # breakStmt
  | 'continue'                              # continueStmt
  | 'return' exprlist?                      # returnStmt
  | 'assert' cond=expr (',' msg=expr)?      # assertStmt
  // `e`, `a = b = e`, `x: f32 = e`, `x += e`: one rule so that the choice is
  // made after the first expression list, with one token of lookahead.
  | exprlist ( ':' ann=expr ('=' exprlist)?
             | augop exprlist
             | ('=' exprlist)*
             )                              # exprStmt
  ;

augop
  : '+=' | '-=' | '*=' | '/=' | '//=' | '%=' | '**=' | '@='
  | '&=' | '|=' | '^=' | '<<=' | '>>='
  ;

// `a`, or a tuple `a, b` / `a,` without parentheses.
exprlist : expr (',' expr)* ','? ;

// ---------------------------------------------------------------- expressions
// Alternatives are listed from the tightest binding to the loosest (Python's
// order). `**` is right-associative and binds tighter than a unary minus on
// its left (`-x**2` is `-(x**2)`).

expr
  // Primaries (atoms are alternatives of `expr` itself rather than a rule of
  // their own: one parse-tree node less per operand).
  : NAME                                                        # nameExpr
  | INT                                                         # intExpr
  | FLOAT                                                       # floatExpr
  | STRING                                                      # stringExpr
  | 'True'                                                      # trueExpr
  | 'False'                                                     # falseExpr
  | 'None'                                                      # noneExpr
  | '...'                                                       # ellipsisExpr
  // `()`, `(e)`, `(e,)`, `(a, b)`: one alternative, told apart by the builder.
  | open='(' (expr (',' expr)* ','?)? close=')'                 # parenExpr
  | open='[' (expr (',' expr)* ','?)? close=']'                 # listExpr
  // Postfix and infix operators.
  | expr open='(' arglist? close=')'                            # callExpr
  | expr '.' NAME                                               # attributeExpr
  | expr open='[' subscript (',' subscript)* ','? close=']'     # subscriptExpr
  | <assoc=right> expr op='**' expr                             # binaryExpr
  | op=('-' | '+' | '~') expr                                   # unaryExpr
  | expr op=('*' | '@' | '/' | '//' | '%') expr                 # binaryExpr
  | expr op=('+' | '-') expr                                    # binaryExpr
  | expr op=('<<' | '>>') expr                                  # binaryExpr
  | expr op='&' expr                                            # binaryExpr
  | expr op='^' expr                                            # binaryExpr
  | expr op='|' expr                                            # binaryExpr
  | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr        # binaryExpr
  | op='not' expr                                               # unaryExpr
  | expr op='and' expr                                          # binaryExpr
  | expr op='or' expr                                           # binaryExpr
  ;

// Positional and keyword arguments (`name=value`), without a rule per
// argument (one parse-tree node less each).
arglist : (NAME '=')? expr (',' (NAME '=')? expr)* ','? ;

// `i`, `a:b`, `a:b:c`, `:`, `::2` ...
subscript
  : lower=expr (c1=':' upper=expr? (c2=':' step=expr?)?)?
  | c1=':' upper=expr? (c2=':' step=expr?)?
  ;

// ---------------------------------------------------------------- lexer

DEF : 'def' ;
FOR : 'for' ;
IN : 'in' ;
IF : 'if' ;
ELIF : 'elif' ;
ELSE : 'else' ;
WHILE : 'while' ;
RETURN : 'return' ;
PASS : 'pass' ;
BREAK : 'break' ;
CONTINUE : 'continue' ;
ASSERT : 'assert' ;
AND : 'and' ;
OR : 'or' ;
NOT : 'not' ;
TRUE : 'True' ;
FALSE : 'False' ;
NONE : 'None' ;

// Python keywords that Argus does not have: reported as AG1010, never as a
// confusing syntax error (frontend/parser_errors.cpp).
RESERVED
  : 'import' | 'class' | 'lambda' | 'with' | 'try' | 'yield' | 'global'
  | 'nonlocal' | 'del' | 'raise' | 'from' | 'as' | 'async' | 'await'
  | 'except' | 'finally' | 'is'
  ;

NAME : [A-Za-z_] [A-Za-z0-9_]* ;

FLOAT
  : DIGITS '.' DIGITS? EXPONENT?
  | '.' DIGITS EXPONENT?
  | DIGITS EXPONENT
  ;
INT
  : DIGITS
  | '0' [xX] ('_'? [0-9a-fA-F])+
  | '0' [bB] ('_'? [01])+
  ;
// Anything else that starts like a number (`0x`, `1_`, `12abc`, `0o17`):
// longer than any valid prefix, so the lexer reports it whole (AG1009).
BAD_NUMBER : [0-9] [0-9a-zA-Z_]* ('.' [0-9a-zA-Z_]*)? ;

fragment DIGITS : [0-9] ('_'? [0-9])* ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

STRING
  : '"""' .*? '"""'
  | '\'\'\'' .*? '\'\'\''
  | '"' (~["\\\r\n] | '\\' ~[\r\n])* '"'
  | '\'' (~['\\\r\n] | '\\' ~[\r\n])* '\''
  ;
// A string that reaches the end of its line (or of the file) unclosed (AG1002).
UNTERMINATED_STRING
  : '"""' (~'"' | '"' ~'"' | '""' ~'"')*
  | '\'\'\'' (~'\'' | '\'' ~'\'' | '\'\'' ~'\'')*
  | '"' (~["\\\r\n] | '\\' ~[\r\n])* '\\'?
  | '\'' (~['\\\r\n] | '\\' ~[\r\n])* '\\'?
  ;

LPAREN : '(' ;
RPAREN : ')' ;
LBRACK : '[' ;
RBRACK : ']' ;
LBRACE : '{' ;
RBRACE : '}' ;
COMMA : ',' ;
COLON : ':' ;
DOT : '.' ;
ELLIPSIS : '...' ;
ARROW : '->' ;
AT : '@' ;
ASSIGN : '=' ;

PLUS : '+' ;
MINUS : '-' ;
STAR : '*' ;
SLASH : '/' ;
DOUBLE_SLASH : '//' ;
PERCENT : '%' ;
POWER : '**' ;
TILDE : '~' ;
AMP : '&' ;
PIPE : '|' ;
CARET : '^' ;
SHL : '<<' ;
SHR : '>>' ;
EQ : '==' ;
NE : '!=' ;
LT : '<' ;
LE : '<=' ;
GT : '>' ;
GE : '>=' ;

PLUS_ASSIGN : '+=' ;
MINUS_ASSIGN : '-=' ;
STAR_ASSIGN : '*=' ;
SLASH_ASSIGN : '/=' ;
DOUBLE_SLASH_ASSIGN : '//=' ;
PERCENT_ASSIGN : '%=' ;
POWER_ASSIGN : '**=' ;
AT_ASSIGN : '@=' ;
AMP_ASSIGN : '&=' ;
PIPE_ASSIGN : '|=' ;
CARET_ASSIGN : '^=' ;
SHL_ASSIGN : '<<=' ;
SHR_ASSIGN : '>>=' ;

// A line break plus the next line's leading whitespace (its indentation).
NEWLINE : ('\r'? '\n' | '\r') [ \t\f]* ;

WS : [ \t\f]+ -> skip ;
COMMENT : '#' ~[\r\n]* -> skip ;
LINE_CONTINUATION : '\\' [ \t]* ('\r'? '\n' | '\r') -> skip ;

// Any other character: reported as AG1001 and dropped by frontend/lexer.cpp.
ERROR_CHAR : . ;

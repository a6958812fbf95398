" Vim syntax file for Argus (.ag), the tile-based GPU kernel language.
if exists('b:current_syntax')
  finish
endif

syn keyword argusConditional if elif else
syn keyword argusRepeat      for while
syn keyword argusStatement   return pass break continue assert
syn keyword argusDefine      def nextgroup=argusFunction skipwhite
syn keyword argusOperator    in and or not
syn keyword argusConstant    True False None inf
syn keyword argusStorage     const
syn keyword argusDtype       bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 f8e4m3 f8e5m2
syn keyword argusType        Tensor
syn keyword argusBuiltin     program_id num_programs cdiv load store copy shared zeros full arange iota
syn keyword argusBuiltin     sum max min prod maximum minimum exp exp2 log log2 sqrt rsqrt tanh erf
syn keyword argusBuiltin     sin cos floor ceil abs fma where cast dot barrier require range tag
syn keyword argusBuiltin     copy_async commit_group wait_group copy_bulk pipelined mma wgmma
syn keyword argusBuiltin     expand_dims reshape rand randint randint4x
syn match   argusFunction    '\h\w*' contained
syn match   argusDecorator   '@\s*\(kernel\|device\)\>'

syn match   argusNumber      '\<0[xX][0-9A-Fa-f_]\+\>'
syn match   argusNumber      '\<0[bB][01_]\+\>'
syn match   argusNumber      '\<\d[0-9_]*\>'
syn match   argusFloat       '\<\d[0-9_]*\.[0-9_]*\([eE][+-]\=\d\+\)\='
syn match   argusFloat       '\%(^\|\W\)\zs\.\d[0-9_]*\([eE][+-]\=\d\+\)\='
syn match   argusFloat       '\<\d[0-9_]*[eE][+-]\=\d\+\>'

syn match   argusEscape      +\\[\\"'nt]+ contained
syn region  argusString      start=+"+ skip=+\\\\\|\\"+ end=+"\|$+ contains=argusEscape
syn region  argusString      start=+'+ skip=+\\\\\|\\'+ end=+'\|$+ contains=argusEscape
syn keyword argusTodo        TODO FIXME XXX NOTE contained
syn match   argusComment     '#.*$' contains=argusTodo,@Spell

syn match   argusOperatorSym '\*\*\|//\|<<\|>>\|[-+*/%&|^~<>=!]=\=\|->'

hi def link argusConditional Conditional
hi def link argusRepeat      Repeat
hi def link argusStatement   Statement
hi def link argusDefine      Statement
hi def link argusOperator    Operator
hi def link argusOperatorSym Operator
hi def link argusConstant    Constant
hi def link argusStorage     StorageClass
hi def link argusDtype       Type
hi def link argusType        Type
hi def link argusBuiltin     Function
hi def link argusFunction    Function
hi def link argusDecorator   PreProc
hi def link argusNumber      Number
hi def link argusFloat       Float
hi def link argusEscape      SpecialChar
hi def link argusString      String
hi def link argusTodo        Todo
hi def link argusComment     Comment

let b:current_syntax = 'argus'

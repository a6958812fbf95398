" Argus buffers: Python-like indentation with spaces (tabs mixed with spaces are AG1004).
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal expandtab shiftwidth=4 softtabstop=4 tabstop=8
setlocal commentstring=#\ %s
setlocal comments=:#
setlocal formatoptions-=t formatoptions+=croql
setlocal iskeyword=@,48-57,_
setlocal suffixesadd=.ag
setlocal indentexpr=ArgusIndent(v:lnum)
setlocal indentkeys=!^F,o,O,<:>,0),0],0},=elif,=else

" Indent after a line ending in ':' (a comment may follow), and inside open brackets;
" dedent after return/pass/break/continue and on elif/else. A statement spanning
" several lines (open brackets) counts from the line where it starts.
function! s:BracketBalance(line) abort
  let code = substitute(a:line, '\s*#.*$', '', '')
  return len(substitute(code, '[^([{]', '', 'g')) - len(substitute(code, '[^)\]}]', '', 'g'))
endfunction

function! ArgusIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  if prev == 0
    return 0
  endif
  let prevline = substitute(getline(prev), '\s*#.*$', '', '')
  let balance = s:BracketBalance(prevline)
  let start = prev
  let total = balance
  while total < 0 && start > 1
    let start = prevnonblank(start - 1)
    let total += s:BracketBalance(getline(start))
  endwhile
  let ind = indent(start)
  if balance > 0
    let ind = indent(prev) + shiftwidth()
  elseif prevline =~# ':\s*$'
    let ind += shiftwidth()
  elseif prevline =~# '^\s*\(return\|pass\|break\|continue\)\>'
    let ind -= shiftwidth()
  endif
  if getline(a:lnum) =~# '^\s*\(elif\|else\)\>'
    " Line up with the `if` or `elif` whose block the previous line ends.
    let body = indent(prev)
    let lnum = prev
    while lnum > 0
      if indent(lnum) < body && getline(lnum) =~# '^\s*\(if\|elif\)\>'
        return indent(lnum)
      endif
      let lnum = prevnonblank(lnum - 1)
    endwhile
    let ind -= shiftwidth()
  endif
  return max([ind, 0])
endfunction

let b:undo_ftplugin = 'setlocal expandtab< shiftwidth< softtabstop< tabstop< commentstring< comments<'
      \ . ' formatoptions< iskeyword< suffixesadd< indentexpr< indentkeys<'

" Argus GPU kernel sources.
autocmd BufRead,BufNewFile *.ag setfiletype argus

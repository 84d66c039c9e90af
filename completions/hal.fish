complete --keep-order --exclusive --command hal --arguments "(COMPLETE=fish hal -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"

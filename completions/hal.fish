complete --keep-order --exclusive --command hal --arguments "(HAL_COMPLETE=fish hal -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"

# bash completion for omniroute
# The agents, import sources and login providers come from the binary
# itself (`omniroute __complete agents|import|login`), so they never drift.
_omniroute_words() {
  local bin=${COMP_WORDS[0]}
  "${bin/#\~/$HOME}" __complete "$1" 2>/dev/null
}
_omniroute() {
  local cur prev
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmds="token setup run import login import-db export migrate rotate-secret-key backup restore --headless --hidden --log-requests --wait-for-db --reset --accept-damaged-wal --version --help"
  case "$prev" in
    setup|run) COMPREPLY=($(compgen -W "$(_omniroute_words agents)" -- "$cur")); return ;;
    import) COMPREPLY=($(compgen -W "$(_omniroute_words import)" -- "$cur")); return ;;
    login) COMPREPLY=($(compgen -W "$(_omniroute_words login)" -- "$cur")); return ;;
    --path|--to) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --from) COMPREPLY=($(compgen -d -- "$cur")); return ;;
  esac
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
  else
    case "${COMP_WORDS[1]}" in
      setup) COMPREPLY=($(compgen -W "--model --undo" -- "$cur")) ;;
      import) COMPREPLY=($(compgen -W "--path" -- "$cur")) ;;
      import-db) COMPREPLY=($(compgen -W "--from" -- "$cur")) ;;
      export) COMPREPLY=($(compgen -W "--to" -- "$cur")) ;;
      backup) COMPREPLY=($(compgen -f -W "--with-log" -- "$cur")) ;;
      restore) COMPREPLY=($(compgen -f -W "--yes --dry-run" -- "$cur")) ;;
    esac
  fi
}
complete -F _omniroute omniroute omniroute-desktop

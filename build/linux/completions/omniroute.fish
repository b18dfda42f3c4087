# fish completion for omniroute
# The agents, import sources and login providers come from the binary
# itself (`omniroute __complete agents|import|login`), so they never drift.
set -l cmds token setup run import login import-db export migrate rotate-secret-key backup restore
function __omniroute_words
    set -l cmd (commandline -opc)[1]
    command -q $cmd; and command $cmd __complete $argv 2>/dev/null
end
complete -c omniroute -f
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -a "$cmds"
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -l headless -d 'start only the gateway'
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -l hidden -d 'start with the window hidden'
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -l log-requests -d 'print one line per request on stdout'
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -l wait-for-db -r -d 'how long start-up waits for an unreachable team-server database'
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -l reset -d 'move the old database aside and start fresh'
complete -c omniroute -n "not __fish_seen_subcommand_from $cmds" -l accept-damaged-wal -d 'start on what precedes a damaged WAL'
complete -c omniroute -l version -d 'print the version'
complete -c omniroute -l help -d 'show the usage'
complete -c omniroute -n "__fish_seen_subcommand_from setup run" -a "(__omniroute_words agents)"
complete -c omniroute -n "__fish_seen_subcommand_from setup" -l model -r -d 'model'
complete -c omniroute -n "__fish_seen_subcommand_from setup" -l undo -d 'restore the backup'
complete -c omniroute -n "__fish_seen_subcommand_from import" -a "(__omniroute_words import)"
complete -c omniroute -n "__fish_seen_subcommand_from import" -l path -r -F
complete -c omniroute -n "__fish_seen_subcommand_from login" -a "(__omniroute_words login)"
complete -c omniroute -n "__fish_seen_subcommand_from import-db" -l from -r -a "(__fish_complete_directories)"
complete -c omniroute -n "__fish_seen_subcommand_from export" -l to -r -F
complete -c omniroute -n "__fish_seen_subcommand_from backup restore" -F
complete -c omniroute -n "__fish_seen_subcommand_from backup" -l with-log -d 'also keep the request log'
complete -c omniroute -n "__fish_seen_subcommand_from restore" -l yes -d 'apply without asking'
complete -c omniroute -n "__fish_seen_subcommand_from restore" -l dry-run -d 'only show what would change'

/**
 * Shell completions (bash, zsh, fish), written from the command table: command words, each command's options, and the
 * values an option or argument takes (fixed words, or file names). `secret-push completion bash` prints the script.
 */
import { type Command, GLOBAL_OPTIONS, type OptionSpec } from './command.js';

const shellWord = (text: string) => text.replace(/[^A-Za-z0-9_.:,/-]/g, '');
const key = (command: Command) => command.words.join(' ');

function optionsOf(command: Command): [string, OptionSpec][] {
  return Object.entries({ ...GLOBAL_OPTIONS, ...command.options }).filter(([, o]) => !o.hidden);
}

/** Groups (`request`, `webhooks`, …) and their sub-words. */
function groups(commands: Command[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of commands)
    if (c.words.length === 2) out.set(c.words[0]!, [...(out.get(c.words[0]!) ?? []), c.words[1]!]);
  return out;
}

export function bashCompletion(commands: Command[]): string {
  const grouped = groups(commands);
  const top = [...new Set(commands.map((c) => c.words[0]!))];
  const valueOptions = [
    ...new Set(
      commands.flatMap((c) =>
        optionsOf(c)
          .filter(([, o]) => o.type === 'string')
          .map(([n]) => `--${n}`),
      ),
    ),
  ];
  const valueCases: string[] = [];
  const optionCases: string[] = [];
  const argCases: string[] = [];
  for (const c of commands) {
    for (const [name, o] of optionsOf(c)) {
      if (o.complete === 'file')
        valueCases.push(`    "${key(c)}|--${name}") COMPREPLY=($(compgen -f -- "$cur")); return;;`);
      else if (o.complete)
        valueCases.push(
          `    "${key(c)}|--${name}") COMPREPLY=($(compgen -W "${o.complete.map(shellWord).join(' ')}" -- "$cur")); return;;`,
        );
    }
    optionCases.push(
      `      "${key(c)}") COMPREPLY=($(compgen -W "${optionsOf(c)
        .map(([n]) => `--${n}`)
        .join(' ')}" -- "$cur"));;`,
    );
    const values = c.positionals.complete;
    if (values === 'file') argCases.push(`    "${key(c)}") COMPREPLY=($(compgen -f -- "$cur"));;`);
    else if (values)
      argCases.push(`    "${key(c)}") COMPREPLY=($(compgen -W "${values.map(shellWord).join(' ')}" -- "$cur"));;`);
  }
  for (const [group, subs] of grouped)
    argCases.push(`    "${group}") COMPREPLY=($(compgen -W "${subs.join(' ')}" -- "$cur"));;`);
  return `# bash completion for secret-push. Load it with: source <(secret-push completion bash)
_secret_push() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local valueopts=" ${valueOptions.join(' ')} "
  local words=() skip="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    if [[ -n $skip ]]; then skip=""; continue; fi
    if [[ $w == -* ]]; then [[ $valueopts == *" $w "* ]] && skip=1; continue; fi
    words+=("$w")
  done
  local key=\${words[0]:-}
  case "$key" in
    ${[...grouped.keys()].join('|')}) [[ \${#words[@]} -ge 2 ]] && key="$key \${words[1]}";;
  esac
  case "$key|$prev" in
${valueCases.join('\n')}
  esac
  if [[ $cur == -* ]]; then
    case "$key" in
${optionCases.join('\n')}
    esac
    return
  fi
  case "$key" in
    "") COMPREPLY=($(compgen -W "${top.join(' ')}" -- "$cur"));;
${argCases.join('\n')}
  esac
}
complete -o default -F _secret_push secret-push
`;
}

export function zshCompletion(commands: Command[]): string {
  return `#compdef secret-push
# zsh completion for secret-push (through zsh's bash completion support).
# Load it with: source <(secret-push completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(commands)}`;
}

const fishText = (text: string) => text.replace(/['\\]/g, (c) => `\\${c}`);

export function fishCompletion(commands: Command[]): string {
  const grouped = groups(commands);
  const top = [...new Set(commands.map((c) => c.words[0]!))];
  const lines = [
    '# fish completion for secret-push. Load it with: secret-push completion fish | source',
    'complete -c secret-push -f',
  ];
  const summaries = new Map(commands.map((c) => [c.words[0]!, c.words.length === 1 ? c.summary : `${c.words[0]} …`]));
  for (const word of top)
    lines.push(
      `complete -c secret-push -n __fish_use_subcommand -a ${word} -d '${fishText(summaries.get(word)!.slice(0, 60))}'`,
    );
  for (const [group, subs] of grouped)
    lines.push(
      `complete -c secret-push -n '__fish_seen_subcommand_from ${group}; and not __fish_seen_subcommand_from ${subs.join(' ')}' -a '${subs.join(' ')}'`,
    );
  for (const c of commands) {
    const when =
      c.words.length === 1
        ? `__fish_seen_subcommand_from ${c.words[0]}`
        : `__fish_seen_subcommand_from ${c.words[0]}; and __fish_seen_subcommand_from ${c.words[1]}`;
    for (const [name, o] of optionsOf(c)) {
      const values =
        o.complete === 'file'
          ? ' -r -F'
          : o.complete
            ? ` -x -a '${o.complete.join(' ')}'`
            : o.type === 'string'
              ? ' -x'
              : '';
      lines.push(
        `complete -c secret-push -n '${when}' -l ${name}${o.short ? ` -s ${o.short}` : ''}${values} -d '${fishText(o.help.slice(0, 60))}'`,
      );
    }
    const args = c.positionals.complete;
    if (args && args !== 'file') lines.push(`complete -c secret-push -n '${when}' -a '${args.join(' ')}'`);
  }
  return `${lines.join('\n')}\n`;
}

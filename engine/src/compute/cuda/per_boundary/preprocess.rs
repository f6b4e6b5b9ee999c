//! Just enough of the C preprocessor to read the kernels' names out of heatlab's CUDA sources
//! without NVRTC: comments, line continuations, `#define` (object-like and function-like, with
//! `...`/`__VA_ARGS__` and `##`) and macro expansion. Other directives (`#pragma`) are dropped;
//! `#` (stringizing) and conditionals are not supported (the sources use neither). The rescan
//! of an expansion does not take in the tokens after it (the sources never need it), so a
//! macro that would need them stays unexpanded and its kernels go missing: tests fail, they do
//! not pass falsely.

use std::collections::HashMap;

/// A macro's parameters (`None`: object-like), whether it ends in `...`, and its body.
struct Macro {
    params: Option<Vec<String>>,
    variadic: bool,
    body: Vec<String>,
}

/// The source's tokens outside directives, with every macro expanded.
pub(super) fn expand_source(source: &str) -> Vec<String> {
    let text = strip_comments(&source.replace("\\\r\n", "").replace("\\\n", ""));
    let mut macros = HashMap::new();
    let mut tokens = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        match line.strip_prefix('#') {
            Some(directive) => {
                if let Some(definition) = directive.trim_start().strip_prefix("define") {
                    let (name, definition) = parse_define(definition);
                    macros.insert(name, definition);
                }
            }
            None => tokens.extend(tokenize(line)),
        }
    }
    expand(&tokens, &macros, &mut Vec::new())
}

/// The names of the `extern "C" __global__` functions among expanded tokens.
pub(super) fn kernel_names(tokens: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for (i, window) in tokens.windows(4).enumerate() {
        if window != ["extern", "\"C\"", "__global__", "void"] {
            continue;
        }
        let mut at = i + 4;
        if tokens.get(at).map(String::as_str) == Some("__launch_bounds__") {
            let (_, next) = arguments(tokens, at + 1);
            at = next;
        }
        if let (Some(name), Some("(")) = (tokens.get(at), tokens.get(at + 1).map(String::as_str)) {
            names.push(name.clone());
        }
    }
    names
}

/// The text without `//` and `/* */` comments (string literals kept whole).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut previous = ' ';
                for skipped in chars.by_ref() {
                    if previous == '*' && skipped == '/' {
                        break;
                    }
                    previous = skipped;
                }
                out.push(' ');
            }
            ('"', _) => {
                out.push(c);
                while let Some(inner) = chars.next() {
                    out.push(inner);
                    match inner {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Identifiers and numbers (one token each), string literals, `##`, and any other character
/// as a token of its own.
fn tokenize(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_alphanumeric() || c == '_' {
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                // A '.' belongs to numbers only (1.0f), never to identifiers (a.b).
                if chars[i] == '.' && !chars[start].is_ascii_digit() {
                    break;
                }
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
        } else if c == '#' && chars.get(i + 1) == Some(&'#') {
            i += 2;
        } else {
            i += 1;
        }
        tokens.push(chars[start..i].iter().collect());
    }
    tokens
}

/// The name and macro of a `#define`'s text (after the word `define`).
fn parse_define(text: &str) -> (String, Macro) {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(end);
    // Function-like only when '(' follows the name at once.
    let Some(rest) = rest.strip_prefix('(') else {
        let definition = Macro {
            params: None,
            variadic: false,
            body: tokenize(rest),
        };
        return (name.to_string(), definition);
    };
    let close = rest.find(')').unwrap_or(rest.len());
    let mut params: Vec<String> = rest[..close]
        .split(',')
        .map(|param| param.trim().to_string())
        .filter(|param| !param.is_empty())
        .collect();
    let variadic = params.last().is_some_and(|param| param == "...");
    if variadic {
        params.pop();
    }
    let body = tokenize(rest.get(close + 1..).unwrap_or(""));
    let definition = Macro {
        params: Some(params),
        variadic,
        body,
    };
    (name.to_string(), definition)
}

/// The arguments of the call whose '(' is at `open`, split at top-level commas, and the index
/// after its ')'. No '(' there: no arguments and `open` itself.
fn arguments(tokens: &[String], open: usize) -> (Vec<Vec<String>>, usize) {
    if tokens.get(open).map(String::as_str) != Some("(") {
        return (Vec::new(), open);
    }
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    for (i, token) in tokens.iter().enumerate().skip(open + 1) {
        match token.as_str() {
            ")" if depth == 0 => return (args, i + 1),
            "," if depth == 0 => args.push(Vec::new()),
            _ => {
                depth += match token.as_str() {
                    "(" => 1,
                    ")" => -1,
                    _ => 0,
                };
                if let Some(arg) = args.last_mut() {
                    arg.push(token.clone());
                }
            }
        }
    }
    (args, tokens.len())
}

/// `tokens` with every macro not in `active` (those being expanded) expanded.
fn expand(
    tokens: &[String],
    macros: &HashMap<String, Macro>,
    active: &mut Vec<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        let found = macros.get(token).filter(|_| !active.contains(token));
        let replaced = match found {
            None => None,
            Some(Macro {
                params: None, body, ..
            }) => {
                i += 1;
                Some(body.clone())
            }
            Some(definition) => {
                let (args, next) = arguments(tokens, i + 1);
                if next == i + 1 {
                    None // a function-like macro's name without a call
                } else {
                    i = next;
                    Some(substitute(definition, args, macros, active))
                }
            }
        };
        match replaced {
            Some(body) => {
                active.push(token.clone());
                out.extend(expand(&body, macros, active));
                active.pop();
            }
            None => {
                out.push(token.clone());
                i += 1;
            }
        }
    }
    out
}

/// The body of a function-like macro with its parameters replaced by the call's arguments:
/// as written beside `##`, else expanded; then the `##` pastes done.
fn substitute(
    definition: &Macro,
    mut args: Vec<Vec<String>>,
    macros: &HashMap<String, Macro>,
    active: &mut Vec<String>,
) -> Vec<String> {
    let params = definition.params.as_deref().unwrap_or(&[]);
    let mut named: HashMap<&str, Vec<String>> = HashMap::new();
    if definition.variadic {
        let rest = args.split_off(params.len().min(args.len()));
        named.insert("__VA_ARGS__", rest.join(&",".to_string()));
    }
    for (param, arg) in params.iter().zip(args) {
        named.insert(param, arg);
    }
    let body = &definition.body;
    let mut pieces: Vec<Option<String>> = Vec::new(); // None: a `##`
    for (i, token) in body.iter().enumerate() {
        let pasted = (i > 0 && body[i - 1] == "##") || body.get(i + 1).is_some_and(|t| t == "##");
        match named.get(token.as_str()) {
            // An empty argument pastes as an empty token (the standard's placemarker).
            Some(arg) if pasted && arg.is_empty() => pieces.push(Some(String::new())),
            Some(arg) if pasted => pieces.extend(arg.iter().cloned().map(Some)),
            Some(arg) => pieces.extend(expand(arg, macros, active).into_iter().map(Some)),
            None if token == "##" => pieces.push(None),
            None => pieces.push(Some(token.clone())),
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut paste = false;
    for piece in pieces {
        match piece {
            None => paste = true,
            Some(token) if paste => {
                paste = false;
                match out.last_mut() {
                    Some(last) => last.push_str(&token),
                    None => out.push(token),
                }
            }
            Some(token) => out.push(token),
        }
    }
    out.retain(|token| !token.is_empty());
    out
}

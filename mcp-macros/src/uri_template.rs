//! RFC 6570 URI template syntax, checked at compile time so a bad template or a variable
//! without a parameter is an error at the attribute. (The runtime has the full matcher.)

/// The variable names of `template`, in order, or what is wrong with it.
pub(crate) fn variables(template: &str) -> Result<Vec<String>, String> {
    let mut vars = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        if rest.as_bytes()[i] == b'}' {
            return Err("unmatched `}`".into());
        }
        let end = rest[i..].find('}').ok_or("unclosed `{`")?;
        let body = &rest[i + 1..i + end];
        let list = body
            .strip_prefix(['+', '#', '.', '/', ';', '?', '&'])
            .unwrap_or(body);
        if list.is_empty() {
            return Err(format!("empty expression `{{{body}}}`"));
        }
        for spec in list.split(',') {
            let spec = spec.strip_suffix('*').unwrap_or(spec);
            let name = match spec.split_once(':') {
                Some((n, len))
                    if !len.is_empty()
                        && len.len() <= 4
                        && len.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    n
                }
                Some(_) => return Err(format!("bad prefix modifier in `{spec}`")),
                None => spec,
            };
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                && !name.starts_with('.')
                && !name.ends_with('.');
            if !valid {
                return Err(format!("bad variable name `{name}`"));
            }
            if vars.iter().any(|v| v == name) {
                return Err(format!("variable `{name}` appears twice"));
            }
            vars.push(name.to_owned());
        }
        rest = &rest[i + end + 1..];
    }
    Ok(vars)
}

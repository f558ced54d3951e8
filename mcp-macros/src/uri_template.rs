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

#[cfg(test)]
mod tests {
    use super::variables;

    #[test]
    fn variables_in_order_through_every_operator() {
        assert_eq!(variables("config://app"), Ok(vec![]));
        assert_eq!(
            variables("users://{id}/posts{/post}{?q,page}{&sort}{#frag}"),
            Ok(vec!["id", "post", "q", "page", "sort", "frag"]
                .into_iter()
                .map(String::from)
                .collect())
        );
        assert_eq!(
            variables("{+path}{.ext}{;matrix}{list*}{name:3}"),
            Ok(["path", "ext", "matrix", "list", "name"]
                .map(String::from)
                .to_vec())
        );
        assert_eq!(variables("x://{a.b_c}"), Ok(vec!["a.b_c".to_owned()]));
    }

    #[test]
    fn malformed_templates_say_what_is_wrong() {
        let err = |t: &str| variables(t).unwrap_err();
        assert_eq!(err("x://}"), "unmatched `}`");
        assert_eq!(err("x://{id"), "unclosed `{`");
        assert_eq!(err("x://{}"), "empty expression `{}`");
        assert_eq!(err("x://{?}"), "empty expression `{?}`");
        assert_eq!(err("x://{id:x}"), "bad prefix modifier in `id:x`");
        assert_eq!(err("x://{id:12345}"), "bad prefix modifier in `id:12345`");
        assert_eq!(err("x://{a-b}"), "bad variable name `a-b`");
        assert_eq!(err("x://{a.}"), "bad variable name `a.`");
        assert_eq!(err("x://{id}/{id}"), "variable `id` appears twice");
    }
}

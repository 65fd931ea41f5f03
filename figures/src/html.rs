//! `REPORT.html`: the same report as REPORT.md, rendered to one HTML page with the figures
//! inline (their PNGs, by the same relative paths) and every heading given the anchor GitHub
//! gives it, so the report's `#figure` links work in both. pulldown-cmark renders the Markdown
//! (CommonMark with GitHub's tables): the report stays written once, in Markdown.

use pulldown_cmark::{html, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// A heading's anchor as GitHub makes it: lower case, spaces to `-`, every character but
/// letters, digits, `-` and `_` dropped (`Harness studies` -> `harness-studies`, `asap-fig8`
/// stays).
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The page's style: readable tables, images no wider than the page.
const STYLE: &str = "body{font-family:sans-serif;max-width:80em;margin:2em auto;padding:0 1em;line-height:1.4}\
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}th,td{border:1px solid #ccc;padding:0.3em 0.5em;vertical-align:top}\
th{background:#f3f3f3}img{max-width:100%}code{background:#f6f6f6;padding:0 0.2em}";

/// `markdown` as a whole HTML page titled `title`: headings carry their [`slug`] as `id` (a
/// repeated heading gets `-1`, `-2` after it, as on GitHub).
pub fn page(title: &str, markdown: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    let events: Vec<Event<'_>> = Parser::new_ext(markdown, options).collect();
    // Each heading's text, to give its start tag the anchor.
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut out_events = Vec::with_capacity(events.len());
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Heading { level, .. }) = &events[i] {
            let level: HeadingLevel = *level;
            let mut text = String::new();
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j], Event::End(TagEnd::Heading(_))) {
                if let Event::Text(t) | Event::Code(t) = &events[j] {
                    text.push_str(t);
                }
                j += 1;
            }
            let base = slug(&text);
            let n = seen.entry(base.clone()).or_insert(0);
            let id = if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            *n += 1;
            out_events.push(Event::Start(Tag::Heading {
                level,
                id: Some(id.into()),
                classes: Vec::new(),
                attrs: Vec::new(),
            }));
        } else {
            out_events.push(events[i].clone());
        }
        i += 1;
    }
    let mut body = String::new();
    html::push_html(&mut body, out_events.into_iter());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_get_githubs_anchors_and_tables_render() {
        assert_eq!(slug("Harness studies"), "harness-studies");
        assert_eq!(slug("asap-fig8"), "asap-fig8");
        assert_eq!(
            slug("The papers' claims (38 failing)"),
            "the-papers-claims-38-failing"
        );
        let html = page(
            "r",
            "## asap-fig8\n\n[to it](#asap-fig8)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## asap-fig8\n",
        );
        assert!(
            html.contains("<h2 id=\"asap-fig8\">asap-fig8</h2>"),
            "{html}"
        );
        assert!(html.contains("<h2 id=\"asap-fig8-1\">"), "{html}");
        assert!(html.contains("<a href=\"#asap-fig8\">to it</a>"), "{html}");
        assert!(html.contains("<td>2</td>"), "{html}");
    }
}

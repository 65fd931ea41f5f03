//! Edge-list graph files.
//!
//! Format, one directive per line:
//! * `# ...` comment (also after data on a line); blank lines are ignored;
//! * `nodes N` (optional, before any edge): the graph has nodes `0..N`; isolated nodes allowed;
//! * `src dst [weight]`: `src` sends to `dst` with the given positive weight (default 1).
//!
//! Without `nodes N`, the node count is one more than the largest index, and every node in
//! between must appear in some edge: a gap is reported as a missing node. A self-loop of weight 1
//! is added to every node whose file omits one.

use super::Topology;
use crate::error::{CoreError, Result};
use std::collections::HashMap;
use std::path::Path;

/// Reads and parses an edge-list file.
///
/// # Errors
/// [`CoreError::Io`] when the file cannot be read; [`CoreError::GraphFile`] naming the line for a
/// malformed line, a bad weight, a duplicate edge, an index beyond `nodes N`, or a missing node.
pub fn read_edge_list(path: &Path) -> Result<Topology> {
    let text = std::fs::read_to_string(path).map_err(|e| CoreError::io(path, e))?;
    parse_edge_list(&text, path)
}

/// Parses edge-list text; `path` is used only in error messages.
///
/// # Errors
/// As [`read_edge_list`].
pub fn parse_edge_list(text: &str, path: &Path) -> Result<Topology> {
    let err = |line: usize, message: String| CoreError::GraphFile {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut declared: Option<usize> = None;
    let mut edges: Vec<(usize, usize, f64, usize)> = Vec::new();
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    for (idx, raw) in text.lines().enumerate() {
        let lineno = idx + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        if fields[0] == "nodes" {
            if declared.is_some() || !edges.is_empty() {
                return Err(err(
                    lineno,
                    "'nodes N' must appear once, before any edge".into(),
                ));
            }
            if fields.len() != 2 {
                return Err(err(lineno, format!("expected 'nodes N', got '{content}'")));
            }
            let n: usize = fields[1].parse().map_err(|_| {
                err(
                    lineno,
                    format!("node count '{}' is not an integer", fields[1]),
                )
            })?;
            if n < 2 {
                return Err(err(
                    lineno,
                    format!("a graph needs at least 2 nodes, got {n}"),
                ));
            }
            if n > super::MAX_NODES {
                return Err(err(
                    lineno,
                    format!("{n} nodes: at most {} are supported", super::MAX_NODES),
                ));
            }
            declared = Some(n);
            continue;
        }
        if fields.len() < 2 || fields.len() > 3 {
            return Err(err(
                lineno,
                format!("expected 'src dst [weight]', got '{content}'"),
            ));
        }
        let node = |s: &str, what: &str| -> Result<usize> {
            let v: usize = s.parse().map_err(|_| {
                err(
                    lineno,
                    format!("{what} '{s}' is not a non-negative integer node index"),
                )
            })?;
            if v >= super::MAX_NODES {
                return Err(err(
                    lineno,
                    format!(
                        "{what} {v} is out of range: at most {} nodes are supported",
                        super::MAX_NODES
                    ),
                ));
            }
            if let Some(n) = declared {
                if v >= n {
                    return Err(err(
                        lineno,
                        format!("{what} {v} is out of range: the file declares nodes 0..{n}"),
                    ));
                }
            }
            Ok(v)
        };
        let src = node(fields[0], "source")?;
        let dst = node(fields[1], "destination")?;
        let weight = match fields.get(2) {
            None => 1.0,
            Some(w) => {
                let v: f64 = w
                    .parse()
                    .map_err(|_| err(lineno, format!("weight '{w}' is not a number")))?;
                if !(v.is_finite() && v > 0.0) {
                    return Err(err(
                        lineno,
                        format!("weight {w} must be finite and positive"),
                    ));
                }
                v
            }
        };
        if let Some(prev) = seen.insert((src, dst), lineno) {
            return Err(err(
                lineno,
                format!("duplicate edge {src} -> {dst} (first on line {prev})"),
            ));
        }
        edges.push((src, dst, weight, lineno));
    }
    let max_index = edges.iter().map(|&(s, d, _, _)| s.max(d)).max();
    let n = match (declared, max_index) {
        (Some(n), _) => n,
        (None, Some(m)) => m + 1,
        (None, None) => {
            return Err(err(
                text.lines().count().max(1),
                "the file holds no edges and no 'nodes N' line".into(),
            ))
        }
    };
    if declared.is_none() {
        let mut present = vec![false; n];
        for &(s, d, _, _) in &edges {
            present[s] = true;
            present[d] = true;
        }
        if let Some(missing) = present.iter().position(|p| !p) {
            return Err(err(
                text.lines().count().max(1),
                format!(
                    "node {missing} appears in no edge although nodes run 0..{}; \
                     add its edges or declare isolated nodes with 'nodes N'",
                    n - 1
                ),
            ));
        }
    }
    let mut topo = Topology::with_self_loops(n, path.display().to_string())
        .map_err(|e| err(1, e.to_string()))?;
    for (s, d, w, _) in edges {
        topo.set_edge(s, d, w);
    }
    Ok(topo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Topology> {
        parse_edge_list(s, Path::new("g.txt"))
    }

    #[test]
    fn parses_comments_weights_and_self_loops() {
        let t = parse("# ring\n0 1\n1 2 0.5 # weighted\n2 0\n").unwrap();
        assert_eq!(t.nodes(), 3);
        assert_eq!(t.weight(1, 2), 0.5);
        assert_eq!(t.weight(2, 2), 1.0);
        let t = parse("0 1\n1 0\n1 1 3\n").unwrap();
        assert_eq!(t.weight(1, 1), 3.0);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("0 1\n1 x\n").unwrap_err().to_string();
        assert!(e.starts_with("g.txt:2:"), "{e}");
        let e = parse("0 1\n1 2 -1\n").unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("positive"), "{e}");
        let e = parse("nodes 3\n0 1\n1 3\n").unwrap_err().to_string();
        assert!(e.contains(":3:") && e.contains("out of range"), "{e}");
        let e = parse("0 1\n0 1\n").unwrap_err().to_string();
        assert!(e.contains("duplicate") && e.contains("line 1"), "{e}");
        let e = parse("0 1 2 3\n").unwrap_err().to_string();
        assert!(e.contains(":1:"), "{e}");
    }

    #[test]
    fn missing_node_is_an_error_unless_declared() {
        let e = parse("0 1\n1 3\n3 0\n").unwrap_err().to_string();
        assert!(e.contains("node 2"), "{e}");
        let t = parse("nodes 4\n0 1\n1 3\n3 0\n").unwrap();
        assert_eq!(t.nodes(), 4);
        assert!(!t.is_strongly_connected());
    }

    #[test]
    fn empty_file_is_an_error() {
        assert!(parse("# nothing\n").is_err());
    }

    #[test]
    fn a_huge_graph_is_refused_before_anything_is_allocated() {
        let e = parse("nodes 100000000000000\n0 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 16384"), "{e}");
        let e = parse("0 100000000000000\n").unwrap_err().to_string();
        assert!(e.contains("at most 16384 nodes"), "{e}");
    }
}

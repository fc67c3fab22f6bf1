//! A titled table of formatted text ([`Table`]), as the terminal, Markdown and HTML outputs
//! print it; the report's own tables are built by `render::tables`.

use serde::Serialize;

/// A titled table of text cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// Caption.
    pub title: String,
    /// Column headings.
    pub header: Vec<String>,
    /// Rows, each as long as the header.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table with only the columns at `columns` (in that order).
    pub fn keep(&self, columns: &[usize]) -> Table {
        let pick = |row: &Vec<String>| -> Vec<String> {
            columns
                .iter()
                .map(|&i| row.get(i).cloned().unwrap_or_default())
                .collect()
        };
        Table {
            title: self.title.clone(),
            header: pick(&self.header),
            rows: self.rows.iter().map(pick).collect(),
        }
    }
}

//! Which of the machine's axes (host, kernel) differ among a report's cells, and the
//! treatments they make when runs of several machines are pooled (`crate::pool`).

use schedlab_store::query::CellView;

/// Which of the machine's axes differ among a report's cells.
#[derive(Debug, Clone, Copy)]
pub struct Machines {
    hosts_differ: bool,
    kernels_differ: bool,
}

impl Machines {
    /// The axes that differ among `cells`.
    pub fn of(cells: &[CellView]) -> Machines {
        Machines {
            hosts_differ: cells.iter().any(|c| c.host != cells[0].host),
            kernels_differ: cells.iter().any(|c| c.kernel != cells[0].kernel),
        }
    }

    /// The treatment of cell `c` whose treatment is `policy` otherwise: the host and kernel,
    /// where they differ, are treatments too: "web1" or "6.12.1" alone when the cells have
    /// one policy and no I/O scheduler, else appended, as in "fifo @ web1".
    pub fn treatment(self, c: &CellView, policy: String, one_policy: bool) -> String {
        let machine: Vec<&str> = [
            (self.hosts_differ, c.host.as_deref()),
            (self.kernels_differ, c.kernel.as_deref()),
        ]
        .into_iter()
        .filter(|(differ, _)| *differ)
        .map(|(_, v)| v.unwrap_or("unknown"))
        .collect();
        match (
            machine.is_empty(),
            one_policy && c.io_scheduler.is_none() && c.settings.is_none(),
        ) {
            (true, _) => policy,
            (false, true) => machine.join(" "),
            (false, false) => format!("{policy} @ {}", machine.join(" ")),
        }
    }
}

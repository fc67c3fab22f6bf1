//! Copying runs between stores (`schedlab push`).

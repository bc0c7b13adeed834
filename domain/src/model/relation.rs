//! A relation one user keeps to another, as stored and carried in steps.

/// A relation one user keeps to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Relation {
    Mute,
    Block,
}

impl Relation {
    /// The stored code of the relation.
    pub fn code(self) -> u8 {
        match self {
            Relation::Mute => 1,
            Relation::Block => 2,
        }
    }

    pub fn from_code(code: u8) -> Option<Relation> {
        match code {
            1 => Some(Relation::Mute),
            2 => Some(Relation::Block),
            _ => None,
        }
    }

    /// The verb: `mute` or `block`.
    pub fn verb(self) -> &'static str {
        match self {
            Relation::Mute => "mute",
            Relation::Block => "block",
        }
    }
}

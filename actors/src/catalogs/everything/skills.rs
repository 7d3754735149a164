//! The fixture's skill (the Skills extension): `skill://everything/tool-tour`,
//! a `SKILL.md` and a reference file in a subdirectory, embedded in the binary.

use crate::catalog::{Catalog, CatalogError, Skill};

/// The files of the skill, by path inside it.
const FILES: [(&str, &str); 2] =
    [("SKILL.md", include_str!("skill/SKILL.md")), ("references/TOOLS.md", include_str!("skill/references/TOOLS.md"))];

pub(super) fn skills(c: &Catalog) -> Result<(), CatalogError> {
    let skill = Skill::from_files("everything/tool-tour", FILES).map_err(|e| CatalogError(e.0))?;
    c.add_skill(skill)
}

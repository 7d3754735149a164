//! Static resources, a watched one and a template.

use mcp_protocol::model::content::ResourceContents;
use serde_json::json;

use crate::catalog::{Catalog, CatalogError, Resource, ResourceTemplate};

use super::helpers::*;

pub(super) fn resources(c: &Catalog) -> Result<(), CatalogError> {
    c.add_resource(
        Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .with_description("A static text resource"),
    )?;
    c.add_resource(
        Resource::blob("test://static-binary", "static-binary", "image/png", &png_bytes())
            .with_description("A 1x1 PNG"),
    )?;
    c.add_resource(
        Resource::text("test://watched-resource", "watched-resource", "text/plain", "Watched resource content")
            .with_description("A resource for update subscriptions"),
    )?;
    c.add_resource(Resource::text(
        "test://stateless-static-text",
        "stateless-static-text",
        "text/plain",
        "This resource is served without any session state.",
    ))?;
    let template = ResourceTemplate::new("test://template/{id}/data", "template-data", |uri, vars, _| async move {
        let id = vars.get("id").cloned().unwrap_or_default();
        let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
        Ok(vec![ResourceContents::text(uri, "application/json", text)])
    })
    .expect("a valid template")
    .with_description("Data for any id")
    .with_mime_type("application/json")
    .with_completer(std::sync::Arc::new(|arg, value, _| {
        if arg != "id" {
            return Vec::new();
        }
        ["1", "2", "3", "123"].iter().filter(|v| v.starts_with(value)).map(|v| v.to_string()).collect()
    }));
    c.add_template(template)?;
    Ok(())
}

//! Prompts with and without arguments, embedded resources and images.

use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::prompts::{GetPromptResult, PromptMessage};
use serde_json::json;

use crate::catalog::{Catalog, CatalogError, Prompt};

use super::helpers::*;

/// Prompts without or with plain arguments.
pub(super) fn simple(c: &Catalog) -> Result<(), CatalogError> {
    c.add_prompt(Prompt::new("test_simple_prompt", "A prompt without arguments", |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![text_message("This is a simple prompt for testing.".into())],
        })
    }))?;
    c.add_prompt(
        Prompt::new("test_prompt_with_arguments", "A prompt with two required arguments", |args, _| async move {
            let a1 = args.get("arg1").cloned().unwrap_or_default();
            let a2 = args.get("arg2").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                description: None,
                messages: vec![text_message(format!("Prompt with arguments: arg1='{a1}', arg2='{a2}'"))],
            })
        })
        .with_argument("arg1", "First test argument", true)
        .with_argument("arg2", "Second test argument", true)
        .with_completer(std::sync::Arc::new(|arg, value, _| {
            let options: &[&str] = match arg {
                "arg1" => &["test", "testing", "tested", "value1"],
                "arg2" => &["alpha", "beta", "gamma"],
                _ => &[],
            };
            options.iter().filter(|o| o.starts_with(value)).map(|o| o.to_string()).collect()
        })),
    )?;
    c.add_prompt(
        Prompt::new("test_prompt_with_embedded_resource", "A prompt embedding a resource", |args, _| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                description: None,
                messages: vec![
                    PromptMessage::user(Content::resource(ResourceContents::text(
                        uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    ))),
                    text_message("Please process the embedded resource above.".into()),
                ],
            })
        })
        .with_argument("resourceUri", "URI of the resource to embed", true),
    )?;
    Ok(())
}

/// Prompts that embed a resource or an image.
pub(super) fn with_media(c: &Catalog) -> Result<(), CatalogError> {
    c.add_prompt(Prompt::new(
        "test_input_required_result_prompt",
        "Asks the user for context before rendering",
        |_, ctx| async move {
            let schema =
                json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]});
            let answer = ctx.elicit("user_context", "What context should the prompt use?", schema)?;
            let context = answer.string("context").unwrap_or("(none)").to_owned();
            Ok(GetPromptResult { description: None, messages: vec![text_message(format!("Context: {context}"))] })
        },
    ))?;
    c.add_prompt(Prompt::new("test_prompt_with_image", "A prompt with an image", |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![
                PromptMessage::user(Content::image(PNG_BASE64, "image/png")),
                text_message("Please analyze the image above.".into()),
            ],
        })
    }))?;
    Ok(())
}

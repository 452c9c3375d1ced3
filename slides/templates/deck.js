// Start reveal.js on a jaxtour deck. A slide taller than the screen scrolls instead of
// being cut off; <html data-deck-ready="true"> tells a browser test the deck is up.
function jaxtourDeck(options) {
  function fit() {
    var slide = Reveal.getCurrentSlide();
    if (slide && slide.scrollHeight > options.height) {
      slide.classList.add("jt-scroll");
    }
  }
  Reveal.on("slidechanged", fit);
  return Reveal.initialize({
    width: options.width,
    height: options.height,
    margin: 0.04,
    center: false,
    hash: true,
    controls: true,
    progress: true,
    transition: options.transition,
    slideNumber: options.slideNumber,
    plugins: [RevealNotes]
  }).then(function () {
    fit();
    document.documentElement.dataset.deckReady = "true";
  });
}

# rbrack.ru: a Rack app as Rails-like services run it, under Debian's puma
# (tests/t_ruby.sh): each request goes App#call -> handle_request ->
# render_page (a computing loop) and lookup (a short sleep, as a query).
class App
  def call(env)
    handle_request(env["PATH_INFO"])
  end

  def handle_request(path)
    lookup(path)
    [200, { "content-type" => "text/plain" }, [render_page(path)]]
  end

  def lookup(path)
    sleep 0.002
  end

  def render_page(path)
    s = 0
    100_000.times { |i| s += i }
    "#{path} #{s}\n"
  end
end

run App.new
